"""Why divide by sqrt(d_k) (seeds 001, 003, 004): q.k's variance grows like d_k and saturates the softmax."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.limits import SCALING_CHUNK_BYTES

DK_GRID: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def dk_grid(d_k: int) -> list[int]:
    """The powers of two up to 512 plus the user's own d_k, sorted."""
    return sorted(set(DK_GRID) | {int(d_k)})


def chunks(n: int, row_bytes: int) -> list[int]:
    """Split n draws into chunks of at most SCALING_CHUNK_BYTES (at least one draw per chunk)."""
    size = max(1, SCALING_CHUNK_BYTES // max(1, row_bytes))
    return [min(size, n - start) for start in range(0, n, size)]


def dot_products(d_k: int, n: int, seed: int) -> torch.Tensor:
    """n dot products q.k of independent q, k with N(0, 1) entries, in float64, drawn a chunk at a time."""
    gen = torch.Generator().manual_seed(int(seed) * 1009 + int(d_k))
    out = []
    for size in chunks(n, 2 * d_k * 8):
        q = torch.randn(size, 1, d_k, generator=gen, dtype=torch.float64)
        k = torch.randn(size, d_k, 1, generator=gen, dtype=torch.float64)
        out.append((q @ k).flatten())  # (size,): a batched dot product, no (size, d_k) product tensor
    return torch.cat(out)


@dataclass(frozen=True)
class VarianceCurve:
    """Measured variance of q.k (and of q.k / sqrt(d_k)) for each d_k, with the standard error."""

    d_k: np.ndarray
    var_raw: np.ndarray
    var_scaled: np.ndarray
    std_err: np.ndarray  # standard error of var_raw (from the sample's fourth moment)
    n: int


def variance_curve(d_ks: Sequence[int], n: int = 4000, seed: int = 0) -> VarianceCurve:
    """Var(q.k) measured from n samples per d_k: theory says d_k (each term has variance 1)."""
    raw, scaled, err = [], [], []
    for d in d_ks:
        s = dot_products(d, n, seed)
        var = float(s.var(unbiased=True))
        centred = s - s.mean()
        m4 = float((centred**4).mean())
        raw.append(var)
        scaled.append(var / d)
        err.append(math.sqrt(max(m4 - var**2, 0.0) / n))
    return VarianceCurve(np.array(d_ks), np.array(raw), np.array(scaled), np.array(err), n)


def softmax_jacobian(p: torch.Tensor) -> torch.Tensor:
    """d softmax / d logits = diag(p) - p p^T, for the last dim (batched)."""
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


def jacobian_norm(p: torch.Tensor) -> torch.Tensor:
    """The Frobenius norm of softmax_jacobian(p) without building it: sqrt(sum p^2 - 2 sum p^3 + (sum p^2)^2)."""
    p2 = (p * p).sum(-1)
    return (p2 - 2 * (p**3).sum(-1) + p2 * p2).clamp_min(0).sqrt()


@dataclass(frozen=True)
class Saturation:
    """Mean softmax statistics of one query against T random keys, averaged over many draws."""

    max_weight: float  # mean largest weight (1/T = spread evenly, 1 = all on one key)
    entropy: float  # mean entropy in nats (log T = even, 0 = one-hot)
    grad_norm: float  # mean Frobenius norm of the softmax Jacobian (0 = no gradient flows)


def random_logits(d_k: int, n_keys: int, n: int, seed: int) -> torch.Tensor:
    """(n, n_keys) dot products of n N(0, 1) queries with n_keys N(0, 1) keys each, drawn a chunk at a time."""
    gen = torch.Generator().manual_seed(int(seed) * 7919 + int(d_k) * 31 + int(n_keys))
    out = []
    for size in chunks(n, (n_keys + 1) * d_k * 8):
        q = torch.randn(size, d_k, 1, generator=gen, dtype=torch.float64)
        k = torch.randn(size, n_keys, d_k, generator=gen, dtype=torch.float64)
        out.append((k @ q).squeeze(-1))  # (size, n_keys)
    return torch.cat(out)


def saturation_of(logits: torch.Tensor) -> Saturation:
    """Mean max weight, entropy and softmax-Jacobian size of softmax over the last dim of (n, T) logits."""
    p = torch.softmax(logits, dim=-1)
    entropy = -(p * torch.log(p.clamp_min(1e-300))).sum(-1)
    return Saturation(float(p.max(-1).values.mean()), float(entropy.mean()), float(jacobian_norm(p).mean()))


def saturation(d_k: int, n_keys: int, n: int = 400, seed: int = 0) -> dict[str, Saturation]:
    """How peaked softmax(q.K^T) and softmax(q.K^T / sqrt(d_k)) are for N(0, 1) q and keys of width d_k.

    Both variants read the same draws, so the only difference between them is the scaling.
    """
    logits = random_logits(d_k, n_keys, n, seed)
    return {"unscaled": saturation_of(logits), "scaled": saturation_of(logits / math.sqrt(d_k))}


def saturation_curves(
    d_ks: Sequence[int], n_keys: int, seed: int = 0, n: int = 400
) -> dict[str, dict[str, np.ndarray]]:
    """{'scaled'|'unscaled': {'max_weight'|'entropy'|'grad_norm': values over d_ks}}, from n draws per d_k."""
    rows = [saturation(d, n_keys, n, seed) for d in d_ks]
    fields = ("max_weight", "entropy", "grad_norm")
    return {v: {f: np.array([getattr(r[v], f) for r in rows]) for f in fields} for v in ("unscaled", "scaled")}


@dataclass(frozen=True)
class OneQuery:
    """One concrete query against T keys at the user's d_k: the logits and the weights."""

    scores: np.ndarray
    logits: np.ndarray
    weights: np.ndarray
    entropy: float
    grad_norm: float


def one_query(d_k: int, n_keys: int, scaled: bool, seed: int = 0) -> OneQuery:
    """A single draw, so the page can show one softmax row for the user's settings."""
    gen = torch.Generator().manual_seed(int(seed))
    q = torch.randn(d_k, generator=gen, dtype=torch.float64)
    k = torch.randn(n_keys, d_k, generator=gen, dtype=torch.float64)
    scores = k @ q
    logits = scores / math.sqrt(d_k) if scaled else scores
    p = torch.softmax(logits, dim=-1)
    entropy = float(-(p * torch.log(p.clamp_min(1e-300))).sum())
    grad = float(jacobian_norm(p))
    return OneQuery(scores.numpy(), logits.numpy(), p.numpy(), entropy, grad)
