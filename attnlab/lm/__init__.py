"""A character-level Llama trained here on Chinese and English text, and any Llama-family folder (contract 16).

`load("zh")`, `load("en")` or `load(folder)` give a `LanguageModel`: `forward(ids, hooks=None, cache=None)`,
`predict(text, k, temperature, top_k, top_p)`, `generate(text, n, temperature, seed, window, sinks, top_k, top_p)`,
`branches(text, n, temperatures, seed, ...)`, `lens(ids)` and `attribution(ids, position, token)` (contract 19:
`attnlab.lm.lens`, `attnlab.lm.sampling`), `save_pretrained(folder)`, `config`. `run_metrics(name)` and
`run_dir(name)` read a shipped run. Core: torch, numpy and safetensors only.
"""

from __future__ import annotations

from attnlab.lm.cache import Cache
from attnlab.lm.config import LMConfig
from attnlab.lm.generation import Generation, Sampling, Step, branches, extend, generate
from attnlab.lm.language import LanguageModel, Output, Prediction
from attnlab.lm.lens import Trace, trace
from attnlab.lm.loading import SHIPPED, allowed_models, load, run_dir, run_metrics
from attnlab.lm.model import POINTS, hook_name
from attnlab.lm.vocab import BOS, UNK, Prepared

__all__ = [
    "BOS",
    "POINTS",
    "SHIPPED",
    "UNK",
    "Cache",
    "Generation",
    "LMConfig",
    "LanguageModel",
    "Output",
    "Prediction",
    "Prepared",
    "Sampling",
    "Step",
    "Trace",
    "allowed_models",
    "branches",
    "extend",
    "generate",
    "hook_name",
    "load",
    "run_dir",
    "run_metrics",
    "trace",
]
