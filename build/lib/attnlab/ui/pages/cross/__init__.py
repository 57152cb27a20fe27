"""The Cross-attention page (/cross): a target attending to a source, padding and decoder masks."""
