"""A character-level Llama trained here on Chinese and English text, and any Llama-family folder (contract 16).

`load("zh")`, `load("en")` or `load(folder)` give a `LanguageModel`: `forward(ids, hooks=None, cache=None)`,
`predict(text, k)`, `generate(text, n, temperature, seed, window, sinks)`, `save_pretrained(folder)`, `config`.
`run_metrics(name)` and `run_dir(name)` read a shipped run. Core: torch, numpy and safetensors only.
"""

from __future__ import annotations

from attnlab.lm.cache import Cache
from attnlab.lm.config import LMConfig
from attnlab.lm.generation import Generation, Step, extend, generate
from attnlab.lm.language import LanguageModel, Output, Prediction
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
    "Step",
    "allowed_models",
    "extend",
    "generate",
    "hook_name",
    "load",
    "run_dir",
    "run_metrics",
]
