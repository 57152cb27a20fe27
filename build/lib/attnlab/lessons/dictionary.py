"""Soft dictionary (seeds 002 and 004): a hard lookup, a hand-weighted lookup, then softmax(q.k/sqrt(d_k))."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KEYS: tuple[str, ...] = ("apple", "banana", "chair")
VALUES: tuple[float, ...] = (10.0, 5.0, 2.0)
FRUIT_WEIGHTS: tuple[float, ...] = (0.6, 0.4, 0.0)
# Small 2-D key vectors: the two fruits point one way, the chair another; the query "fruit" sits between the fruits.
KEY_VECTORS: tuple[tuple[float, ...], ...] = ((2.0, 1.0), (1.5, 1.5), (-1.0, 2.0))
QUERY_VECTOR: tuple[float, ...] = (1.0, 0.5)


def hard_lookup(query: str, keys: Sequence[str] = KEYS, values: Sequence[float] = VALUES) -> float | None:
    """An exact-match dictionary: the value stored under `query` (trimmed, case-insensitive), or None."""
    wanted = query.strip().lower()
    for key, value in zip(keys, values, strict=True):
        if key == wanted:
            return float(value)
    return None


@dataclass(frozen=True)
class WeightedLookup:
    """sum_i w_i * v_i with its terms, and the weights' sum (1 for an attention row)."""

    terms: tuple[float, ...]
    total: float
    weight_sum: float


def weighted_lookup(weights: Sequence[float], values: Sequence[float]) -> WeightedLookup:
    """The weighted sum the seed works by hand: 0.6*10 + 0.4*5 + 0*2 = 8."""
    terms = tuple(float(w) * float(v) for w, v in zip(weights, values, strict=True))
    return WeightedLookup(terms, math.fsum(terms), math.fsum(float(w) for w in weights))


def softmax(x: np.ndarray) -> np.ndarray:
    """The stable softmax of a 1-D array (entries of -inf get weight 0)."""
    z = np.asarray(x, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


@dataclass(frozen=True)
class SoftLookup:
    """Every number of softmax(q.k / (sqrt(d_k) * temperature)) . v for one query."""

    scores: np.ndarray  # q . k_i
    logits: np.ndarray  # scores / (sqrt(d_k) * temperature); +-inf-free, None-free
    weights: np.ndarray  # softmax(logits); one-hot on the best key(s) at temperature 0
    value: float  # weights . values
    d_k: int
    temperature: float

    @property
    def divisor(self) -> float:
        """What the scores are divided by before the softmax: sqrt(d_k) * temperature."""
        return math.sqrt(self.d_k) * self.temperature


def soft_lookup(
    query: Sequence[float], keys: Sequence[Sequence[float]], values: Sequence[float], temperature: float = 1.0
) -> SoftLookup:
    """Attention for one query over a few keys. Temperature 0 is the hard limit: all weight on the top score
    (shared equally on a tie), which is what the softmax approaches as the temperature goes to 0."""
    q = np.asarray(query, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    if k.ndim != 2 or k.shape[1] != q.shape[0]:
        raise ValueError(f"every key needs {q.shape[0]} numbers like the query, got shape {k.shape}")
    v = np.asarray(values, dtype=np.float64)
    d_k = q.shape[0]
    scores = k @ q
    if temperature <= 0:
        best = np.isclose(scores, scores.max(), rtol=0, atol=1e-12)
        weights = best / best.sum()
        logits = np.where(best, 0.0, -np.inf)
    else:
        divisor = math.sqrt(d_k) * temperature
        with np.errstate(over="ignore"):  # a tiny temperature sends the shown logits to +-inf ...
            logits = scores / divisor
            weights = softmax((scores - scores.max()) / divisor)  # ... but never the weights: the max becomes 0
    return SoftLookup(scores, logits, weights, float(weights @ v), d_k, float(temperature))


def sweep_temperatures(hi: float, n: int = 61) -> np.ndarray:
    """The temperatures a sweep chart samples: 0 (the hard limit) to `hi`, evenly."""
    return np.round(np.linspace(0.0, hi, n), 3)


def temperature_sweep(
    query: Sequence[float], keys: Sequence[Sequence[float]], values: Sequence[float], temps: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """(weights per temperature (n_temps, n_keys), looked-up value per temperature)."""
    rows = [soft_lookup(query, keys, values, t) for t in temps]
    return np.array([r.weights for r in rows]), np.array([r.value for r in rows])
