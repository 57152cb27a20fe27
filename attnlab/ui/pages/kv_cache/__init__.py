"""The KV-cache page: the cache of real models, five kinds of attention on one chart, MLA step by step."""
