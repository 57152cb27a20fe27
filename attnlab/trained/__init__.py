"""Small causal decoders trained here: load a recorded run, run it, score its heads, generate and patch."""

from __future__ import annotations

from attnlab.trained.decoder import Decoder, DecoderRun, SymbolError, evaluate, load, run_dir
from attnlab.trained.generation import CacheStep, generate
from attnlab.trained.patching import patch_heads, patch_path

__all__ = [
    "CacheStep",
    "Decoder",
    "DecoderRun",
    "SymbolError",
    "evaluate",
    "generate",
    "load",
    "patch_heads",
    "patch_path",
    "run_dir",
]
