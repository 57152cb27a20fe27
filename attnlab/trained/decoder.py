"""Load a recorded decoder run by name or folder and run it on symbols (contract 8)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

from attnlab.attention import AttentionSteps
from attnlab.limits import TRAINED_MAX_SYMBOLS
from attnlab.multihead import MultiHeadSteps
from attnlab.trained.data import first_mask, repeating
from attnlab.trained.model import AttnOnly, Config, zero_heads
from attnlab.trained.training import EVAL_PERIODS, measure

RUNS = Path(__file__).parent / "runs"


class SymbolError(ValueError):
    """A sequence the decoder cannot take: an unknown symbol, nothing at all, or too many."""


@dataclass(frozen=True)
class DecoderRun:
    """One forward pass: tokens (start marker first), attentions (L, H, T, T), probs (T, V)."""

    tokens: list[str]
    attentions: np.ndarray  # (L, H, T, T) float32
    probs: np.ndarray  # (T, V) float32: row i is the distribution of the symbol after tokens[i]
    ids: torch.Tensor  # (T,) input ids, start marker included
    ablate: tuple[tuple[int, int], ...]


def run_dir(name_or_dir: str | Path) -> Path:
    """The folder of a shipped run (by recipe name) or of one the train command wrote."""
    shipped = RUNS / str(name_or_dir)
    folder = shipped if shipped.is_dir() else Path(name_or_dir)
    if not (folder / "log.json").is_file():
        raise FileNotFoundError(f"no recorded run at {name_or_dir!r}")
    return folder


class Decoder:
    """One checkpoint of a recorded run, with its vocabulary, caps and training log."""

    def __init__(self, folder: Path, step: int | None = None):
        self.folder = folder
        self.log = json.loads((folder / "log.json").read_text())
        self.vocab: tuple[str, ...] = tuple(self.log["vocab"])
        self.start: str = self.log["start"]
        self.steps: list[int] = [c["step"] for c in self.log["checkpoints"]]
        self.step = self.steps[-1] if step is None else int(step)
        if self.step not in self.steps:
            raise ValueError(f"step {step} is not a checkpoint; checkpoints: {self.steps}")
        self.n_layers: int = self.log["n_layers"]
        self.n_heads: int = self.log["n_heads"]
        self.max_len: int = min(self.log["length"], TRAINED_MAX_SYMBOLS)
        cfg = Config(self.n_layers, self.n_heads, self.log["d_model"], len(self.vocab), self.log["length"] + 1)
        self.model = AttnOnly(cfg)
        self.model.load_state_dict(load_file(str(folder / f"step{self.step:05d}.safetensors")))
        self.model.eval()
        self._index = {s: i for i, s in enumerate(self.vocab)}

    @property
    def record(self) -> dict:
        """This checkpoint's line in log.json (losses and head scores)."""
        return self.log["checkpoints"][self.steps.index(self.step)]

    def encode(self, symbols) -> torch.Tensor:
        """Symbol ids (T,) for a list of symbols or a string (spaces ignored); SymbolError names the cause."""
        seq = symbols.split() if isinstance(symbols, str) else list(symbols)
        if isinstance(symbols, str) and len(seq) == 1 and len(seq[0]) > 1:
            seq = list(seq[0])
        if not seq:
            raise SymbolError("the sequence is empty")
        if len(seq) > self.max_len:
            raise SymbolError(f"{len(seq)} symbols is more than the cap of {self.max_len}")
        for s in seq:
            if s not in self._index:
                raise SymbolError(f"unknown symbol {s!r}: use letters a-z and digits 0-9")
        return torch.tensor([self._index[s] for s in seq])

    @torch.no_grad()
    def forward(self, symbols, ablate=(), hooks=None) -> tuple[torch.Tensor, list[AttentionSteps], torch.Tensor]:
        """Logits (1, T, V), every layer's attention stages and the input ids (T,); hooks as in `model`."""
        ids = self.ids(symbols)
        logits, steps = self.model(ids[None], tuple(ablate), hooks)
        return logits, steps, ids

    def ids(self, symbols) -> torch.Tensor:
        """The model's input ids (T,): the start marker's id, then the symbols'."""
        return torch.cat([torch.tensor([len(self.vocab)]), self.encode(symbols)])

    def problem(self, symbols: list[str]) -> tuple[str, dict] | None:
        """Why `run` would refuse these symbols, as a reason (empty, unknown, too_long) and its fields; None if fine."""
        if not symbols:
            return "empty", {}
        unknown = list(dict.fromkeys(s for s in symbols if s not in self._index))
        if unknown:
            return "unknown", {"unknown": unknown}
        if len(symbols) > self.max_len:
            return "too_long", {"n": len(symbols), "cap": self.max_len}
        return None

    def run(self, symbols, ablate=()) -> DecoderRun:
        """Attention weights and next-symbol distributions at every position."""
        ablate = tuple((int(ly), int(hd)) for ly, hd in ablate)
        logits, steps, ids = self.forward(symbols, ablate)
        att = torch.stack([s.weights[0] for s in steps])  # (L, H, T, T)
        probs = torch.softmax(logits[0], -1)  # (T, V)
        tokens = [self.start] + [self.vocab[i] for i in ids[1:].tolist()]
        return DecoderRun(tokens, att.float().numpy(), probs.float().numpy(), ids, ablate)

    def head_steps(self, run: DecoderRun, layer: int, head: int) -> AttentionSteps:
        """Every stage (q, k, scores, mask, softmax, output) of one head on a run, ablations kept."""
        heads = self.layer_steps(run, layer).heads  # (H, T, ...)
        pick = {f: getattr(heads, f)[head] for f in AttentionSteps.__dataclass_fields__ if f != "scale"}
        return AttentionSteps(**pick, scale=heads.scale)

    @torch.no_grad()
    def layer_steps(self, run: DecoderRun, layer: int) -> MultiHeadSteps:
        """One layer on a run, ablations kept, shaped as the Playground's stage table reads it (batch dropped)."""
        ids = self.ids(run.tokens[1:])[None]  # (1, T)
        hooks = zero_heads(run.ablate)
        x, _ = self.model.residual(ids, layer, hooks=hooks)  # (1, T, D): the stream entering this layer
        s = self.model.layer_steps(x, layer, hooks)
        concat = self.model.heads_concat(s, layer, hooks)  # (1, T, D)
        q, k, v = (x @ self.model.w_qkv[layer])[0].chunk(3, dim=-1)  # (T, D) each, head h in columns h*d_k..
        heads = AttentionSteps(
            **{f: getattr(s, f)[0] for f in AttentionSteps.__dataclass_fields__ if f != "scale"}, scale=s.scale
        )
        output = (concat @ self.model.w_o[layer])[0]  # (T, D): what this layer adds to the stream
        return MultiHeadSteps(x[0], x[0], q, k, v, heads, concat[0], output, self.n_heads)


def load(name_or_dir: str | Path, step: int | None = None) -> Decoder:
    """The shipped run by recipe name, or a folder `python -m attnlab.train` wrote; step=None is the last."""
    return Decoder(run_dir(name_or_dir), step)


def evaluate(decoder: Decoder, n: int = 256, seed: int = 777, ablate=()) -> dict:
    """The goals' figures on fresh sequences of periods 4-12: losses, top-1 accuracies, head scores."""
    gen = torch.Generator().manual_seed(seed)
    ids = repeating(n, decoder.max_len, EVAL_PERIODS, gen)
    out = measure(decoder.model, ids, tuple(ablate))
    out["n_repeats"] = int((~first_mask(ids)).sum())
    return out
