"""Positions as modern models use them: RoPE rotates q and k, ALiBi adds a distance penalty to the scores.

RoPE (Su et al., RoFormer) turns pair i of a head's dimensions at position p by the angle p * base**(-2i/d), so
q_m . k_n depends only on m - n. Two layouts of the pairs exist and are not interchangeable on the same weights:
rotate-half (pair i with i + d/2: transformers' Llama, GPT-NeoX) and interleaved (pair 2i with 2i+1: GPT-J, Meta's
original Llama code). ALiBi (Press et al., 2022) gives head h the slope m_h and adds -m_h * |i - j| to the scaled
scores; BLOOM adds +m_h * j instead, which differs by a constant per row and so gives the same softmax.
"""

from __future__ import annotations

import math
from typing import Literal

import torch

Layout = Literal["half", "interleaved"]
LAYOUTS: tuple[str, ...] = ("half", "interleaved")


def _check_width(d: int) -> None:
    """RoPE rotates pairs of dimensions: the width must be even (and not 0)."""
    if d < 2 or d % 2:
        raise ValueError(f"rope needs an even head width of at least 2 (pairs of dimensions), got d={d}")


def frequencies(d: int, base: float = 10000.0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """(d/2,): the angle per position of each pair, base**(-2i/d); pair 0 turns fastest."""
    _check_width(d)
    if not base > 1.0 or not math.isfinite(base):
        raise ValueError(f"base must be a finite number above 1, got {base!r}")
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d).to(dtype)


def angles(
    t: int, d: int, positions: torch.Tensor | None = None, *, base: float = 10000.0, dtype=torch.float64
) -> torch.Tensor:
    """(T, d/2): the angle pair i turns by at each position, position * base**(-2i/d)."""
    pos = torch.arange(t, dtype=torch.float64) if positions is None else _positions(positions, t)
    return torch.outer(pos, frequencies(d, base)).to(dtype)  # (T, d/2)


def _positions(positions: torch.Tensor, t: int) -> torch.Tensor:
    """Positions as float64 for the angles: integers, one per row of x."""
    pos = torch.as_tensor(positions)
    if pos.dtype.is_floating_point or pos.dtype == torch.bool or pos.dtype.is_complex:
        raise ValueError(f"positions must be an integer tensor, got {pos.dtype}")
    if pos.dim() != 1 or pos.numel() != t:
        raise ValueError(f"positions must hold one integer per row of x ({t}), got shape {tuple(pos.shape)}")
    return pos.to(torch.float64)


def rope(
    x: torch.Tensor, positions: torch.Tensor | None = None, *, base: float = 10000.0, interleaved: bool = False
) -> torch.Tensor:
    """Rotate the last dimension of x (..., T, d) pair by pair: pair i at position p by p * base**(-2i/d).

    interleaved=False pairs dimension i with i + d/2 (rotate-half); True pairs 2i with 2i+1. The angles are
    computed in float64 and the result has x's dtype.
    """
    if x.dim() < 2:
        raise ValueError(f"x must be (..., T, d), got shape {tuple(x.shape)}")
    t, d = x.size(-2), x.size(-1)
    theta = angles(t, d, positions, base=base)  # (T, d/2)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    if interleaved:
        even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each: pair i is (2i, 2i+1)
        return torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2)
    first, second = x[..., : d // 2], x[..., d // 2 :]  # pair i is (i, i + d/2)
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)


def pairs(d: int, interleaved: bool = False) -> list[tuple[int, int]]:
    """Which two dimensions each pair rotates, pair 0 first: (i, i + d/2) or (2i, 2i+1)."""
    _check_width(d)
    return [(2 * i, 2 * i + 1) if interleaved else (i, i + d // 2) for i in range(d // 2)]


def _slopes_power_of_2(n: int) -> list[float]:
    """2^(-8i/n) for i = 1..n."""
    return [2.0 ** (-8.0 * i / n) for i in range(1, n + 1)]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """(H,) float64 slopes of Press et al.: for a power of 2, 2^(-8i/H), i = 1..H.

    Otherwise the slopes for the largest power of 2 below H, then every other slope of the sequence for twice that
    power, until there are H (the paper's own code, which BLOOM and MPT follow).
    """
    if n_heads < 1:
        raise ValueError(f"n_heads must be at least 1, got {n_heads}")
    low = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = _slopes_power_of_2(low) + _slopes_power_of_2(2 * low)[0::2][: n_heads - low]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(n_heads: int, t_q: int, t_k: int | None = None, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """(H, T_q, T_k): -slope_h * |i - j|, added to the scaled scores (query i, key j, aligned top-left)."""
    t_k = t_q if t_k is None else t_k
    distance = (torch.arange(t_q).unsqueeze(-1) - torch.arange(t_k).unsqueeze(0)).abs()  # (T_q, T_k)
    return (-alibi_slopes(n_heads)[:, None, None] * distance).to(dtype)  # (H, T_q, T_k)
