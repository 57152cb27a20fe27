"""Small causal decoders trained here: load a recorded run, run it on typed symbols, score its heads."""

from __future__ import annotations

from attnlab.trained.decoder import Decoder, DecoderRun, SymbolError, evaluate, load, run_dir

__all__ = ["Decoder", "DecoderRun", "SymbolError", "evaluate", "load", "run_dir"]
