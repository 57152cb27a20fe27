"""The query-key map (AttentionViz): one head's queries and keys in one 2-D picture, and how far nearness is attention.

A head weighs key j for query i by softmax_j(q_i . k_j * scale). Two changes leave every weight as it is:
    k_j -> k_j + c       adds q_i . c to every score of row i (a constant per row: softmax ignores it)
    q -> a q, k -> k / a  leaves every q_i . k_j unchanged
AttentionViz uses both so that distance can stand for attention: the keys are moved so their mean is the queries'
mean, then scaled so queries and keys have the same mean length. Since
    |q_i - k_j|^2 = |q_i|^2 + |k_j|^2 - 2 q_i . k_j
a query's nearest keys are its most attended ones up to the spread of the keys' lengths. `agreement` measures how
true that is for one query, in the full d-dimensional space and in the 2-D picture (a joint PCA of queries and keys).
The vectors are the ones the scores were made of: after RoPE in a rotary model, so nearness is nearness in the
scores at these positions. With grouped heads a query head's map holds the keys of the key/value head it reads;
a soft-cap (Gemma 2) is monotone and a scale is one factor per head, so neither changes which keys rank nearest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NEAREST = 3  # keys marked around a picked query, and the top-k whose overlap with the most attended is reported


@dataclass(frozen=True)
class QKMap:
    """One head's queries and keys, normalised as above and projected on their first two principal axes."""

    queries: np.ndarray  # (T_q, d) after normalisation
    keys: np.ndarray  # (T_k, d) after normalisation
    xy_q: np.ndarray  # (T_q, 2) the queries in the picture
    xy_k: np.ndarray  # (T_k, 2) the keys in the picture
    explained: tuple[float, float]  # share of the joint variance each axis keeps


@dataclass(frozen=True)
class Agreement:
    """How far one query's nearest keys are its most attended keys."""

    nearest: np.ndarray  # (n,) visible keys, nearest first (full space)
    top: np.ndarray  # (n,) visible keys, most attended first
    overlap: int  # |nearest ∩ top| among the n
    spearman: float  # rank correlation of -distance and weight over the visible keys (full space)
    spearman_2d: float  # the same with distances in the 2-D picture
    overlap_2d: int  # the overlap with the n nearest in the picture


def normalised(queries: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys moved to the queries' centre, then both scaled to one mean length: (T_q, d), (T_k, d) -> the same shapes."""
    q = queries.astype(np.float64)
    k = keys.astype(np.float64) + (q.mean(axis=0) - keys.astype(np.float64).mean(axis=0))
    q_len, k_len = np.linalg.norm(q, axis=1).mean(), np.linalg.norm(k, axis=1).mean()
    a = np.sqrt(k_len / q_len) if q_len > 0 and k_len > 0 else 1.0
    return q * a, k / a


def project(points: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    """The first two principal coordinates of the points (N, d) -> (N, 2), and the share of variance each keeps."""
    centred = points - points.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:2]  # (≤2, d)
    signs = np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])  # a fixed orientation per axis
    xy = centred @ (axes * signs[:, None]).T  # (N, ≤2)
    total = float((s**2).sum())
    shares = [float(v**2 / total) if total > 0 else 0.0 for v in s[:2]]
    while xy.shape[1] < 2:  # d = 1 or a single point: the second axis is flat
        xy = np.hstack([xy, np.zeros((len(xy), 1))])
        shares.append(0.0)
    return xy, (shares[0], shares[1])


def qk_map(queries: np.ndarray, keys: np.ndarray) -> QKMap:
    """The map of one head: queries (T_q, d) and keys (T_k, d) as the model computed them (biases included)."""
    q, k = normalised(queries, keys)
    xy, explained = project(np.vstack([q, k]))  # (T_q + T_k, 2)
    return QKMap(q, k, xy[: len(q)], xy[len(q) :], explained)


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1 with ties sharing their mean rank (as Spearman's rho needs)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2)[inverse]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation; 0 when either side is constant (nothing to rank) or has fewer than 2 values."""
    if len(a) < 2:
        return 0.0
    ra, rb = ranks(a) - (len(a) + 1) / 2, ranks(b) - (len(b) + 1) / 2
    denominator = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else 0.0


def visible_keys(t_k: int, query: int, causal: bool, window: int | None = None) -> np.ndarray:
    """The keys one query may attend to: all of them, 0..query under a causal mask (SDPA's top-left triangle), or
    only the last `window` of those under a causal sliding window (query - window < key <= query)."""
    if not causal:
        return np.arange(t_k)
    end = min(query + 1, t_k)
    return np.arange(max(0, end - window) if window is not None else 0, end)


def agreement(
    qk: QKMap, weights: np.ndarray, query: int, causal: bool = False, n: int = NEAREST, window: int | None = None
) -> Agreement:
    """Nearest keys against the weights (T_q, T_k) of one query row, over the keys that query can see."""
    keys = visible_keys(len(qk.keys), query, causal, window)
    row = weights[query, keys]  # (V,)
    far = np.linalg.norm(qk.keys[keys] - qk.queries[query], axis=1)  # (V,)
    far_2d = np.linalg.norm(qk.xy_k[keys] - qk.xy_q[query], axis=1)  # (V,)
    n = min(n, len(keys))
    nearest, nearest_2d = keys[far.argsort(kind="stable")[:n]], keys[far_2d.argsort(kind="stable")[:n]]
    top = keys[(-row).argsort(kind="stable")[:n]]
    return Agreement(
        nearest=nearest,
        top=top,
        overlap=len(set(nearest.tolist()) & set(top.tolist())),
        spearman=spearman(-far, row),
        spearman_2d=spearman(-far_2d, row),
        overlap_2d=len(set(nearest_2d.tolist()) & set(top.tolist())),
    )
