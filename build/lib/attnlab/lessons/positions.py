"""Positions (seed 000): self-attention alone cannot tell order; sinusoidal encodings break the symmetry."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnlab.multihead import MultiHeadWeights, multi_head_steps
from attnlab.tokens import embed, positional_encoding

PERMUTATIONS: tuple[str, ...] = ("reverse", "rotate", "swap", "shuffle")


def pe_value(pos: int, dim: int, d_model: int) -> float:
    """One sinusoid entry by the formula: sin(pos / 10000^(2i/d)) for dim 2i, cos(same) for dim 2i+1."""
    two_i = dim - dim % 2
    angle = pos / 10000.0 ** (two_i / d_model)
    return float(np.sin(angle) if dim % 2 == 0 else np.cos(angle))


def pe_table(n_pos: int, d_model: int) -> np.ndarray:
    """(n_pos, d_model) sinusoidal encodings, the same ones the Playground adds."""
    return positional_encoding(n_pos, d_model).numpy()


def permutation(kind: str, t: int, seed: int = 0) -> list[int]:
    """new order -> old index: reverse, rotate by one, swap first and last, or a seeded shuffle."""
    idx = list(range(t))
    if t < 2:
        return idx
    if kind == "reverse":
        return idx[::-1]
    if kind == "rotate":
        return idx[1:] + idx[:1]
    if kind == "swap":
        return [idx[-1], *idx[1:-1], idx[0]]
    if kind == "shuffle":
        gen = torch.Generator().manual_seed(int(seed))
        order = torch.randperm(t, generator=gen).tolist()
        return order if order != idx else idx[1:] + idx[:1]  # a shuffle that moves nothing teaches nothing
    raise ValueError(f"unknown permutation {kind!r}; choose from {PERMUTATIONS}")


@dataclass(frozen=True)
class Equivariance:
    """Outputs for the original and the shuffled sentence, and how far apart they are once un-shuffled."""

    tokens: list[str]
    order: list[int]  # shuffled[j] = tokens[order[j]]
    out: np.ndarray  # (T, d_model) output for the original order
    out_shuffled: np.ndarray  # (T, d_model) output for the shuffled order
    out_unshuffled: np.ndarray  # out_shuffled put back in the original order
    max_diff: float  # max |out - out_unshuffled|: ~1e-16 without positions

    @property
    def shuffled_tokens(self) -> list[str]:
        """The sentence in its shuffled order."""
        return [self.tokens[i] for i in self.order]

    @property
    def difference(self) -> np.ndarray:
        """|out - out_unshuffled| cell by cell: zero up to rounding without positions."""
        return np.abs(self.out - self.out_unshuffled)


def self_attention(x: torch.Tensor, weights: MultiHeadWeights) -> torch.Tensor:
    """One-head self-attention with W_O: the block whose symmetry the lesson tests."""
    return multi_head_steps(x, x, weights, 1).output


def equivariance(tokens: list[str], d_model: int, seed: int, order: list[int], positions: bool) -> Equivariance:
    """Run attention on the tokens and on the shuffled tokens (positions added by slot when asked)."""
    weights = MultiHeadWeights.random(d_model, seed)
    t = len(tokens)
    shuffled = [tokens[i] for i in order]
    x = embed(tokens, d_model, seed)
    xs = embed(shuffled, d_model, seed)
    if positions:
        pe = positional_encoding(t, d_model)
        x, xs = x + pe, xs + pe
    out = self_attention(x, weights)
    out_s = self_attention(xs, weights)
    back = torch.empty_like(out_s)
    back[torch.tensor(order)] = out_s  # row j of the shuffled run belongs to token order[j]
    diff = float((out - back).abs().max()) if t else 0.0
    return Equivariance(tokens, list(order), out.numpy(), out_s.numpy(), back.numpy(), diff)
