"""Cost (seeds 000 and 003): the T x T matrix makes time and memory grow like T^2; RNN vs attention."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from attnlab.bench import results
from attnlab.bench.row import ResultRow
from attnlab.fit import loglog_slope
from attnlab.limits import COST_LIVE_BUDGET_S, MAX_COST_T, MIN_COST_T


def seq_lens(t_min: int, t_max: int) -> list[int]:
    """Powers of two from t_min to t_max (both included, each clamped to the live range)."""
    lo = max(MIN_COST_T, min(int(t_min), MAX_COST_T))
    hi = max(lo, min(int(t_max), MAX_COST_T))
    out, t = [], lo
    while t < hi:
        out.append(t)
        t *= 2
    return [*out, hi]


def explicit_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, int]:
    """softmax(q k^T / sqrt(d)) v written out, and the bytes of every tensor it creates on the way."""
    scores = q @ k.transpose(-2, -1)  # (T, T)
    scaled = scores / math.sqrt(q.size(-1))  # (T, T)
    weights = torch.softmax(scaled, dim=-1)  # (T, T)
    out = weights @ v  # (T, d)
    made = sum(x.numel() * x.element_size() for x in (scores, scaled, weights, out))
    return out, made


@dataclass(frozen=True)
class LivePoint:
    """One T measured on this machine."""

    seq_len: int
    median_ms: float
    p20_ms: float
    p80_ms: float
    reps: int
    bytes: int  # bytes of the intermediates the explicit path allocates (three T x T, one T x d)


@dataclass(frozen=True)
class LiveRun:
    points: list[LivePoint]
    head_dim: int
    skipped: list[int] = field(default_factory=list)  # T values left out when the time budget ran out
    seconds: float = 0.0


def _quantile(xs: list[float], q: float) -> float:
    return float(np.quantile(np.array(xs), q))


def measure_live(
    lens: Sequence[int], head_dim: int = 64, seed: int = 0, budget_s: float = COST_LIVE_BUDGET_S, max_reps: int = 7
) -> LiveRun:
    """Time the explicit path (float32, one head) at each T with perf_counter: inputs built outside the
    timed region, one warm-up, then at least one timed call and more (up to max_reps) while this T's share
    of the budget lasts. Past 1.5x the budget the remaining T are skipped (and listed), so a busy machine
    cannot stall the page. One intra-op thread while timing: on a shared 2-core host, threads that wait
    for each other add noise that swamps the T^2 growth."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _measure(lens, head_dim, seed, budget_s, max_reps)
    finally:
        torch.set_num_threads(threads)


def _measure(lens: Sequence[int], head_dim: int, seed: int, budget_s: float, max_reps: int) -> LiveRun:
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(int(seed))
    points, skipped = [], []
    for i, t in enumerate(lens):
        elapsed = time.perf_counter() - start
        if elapsed > 1.5 * budget_s:
            skipped.extend(lens[i:])
            break
        share = max(budget_s - elapsed, 0.0) / (len(lens) - i)
        q, k, v = (torch.randn(t, head_dim, generator=gen) for _ in range(3))
        t0 = time.perf_counter()
        _, made = explicit_attention(q, k, v)  # warm-up (and the byte count)
        spent = time.perf_counter() - t0
        times: list[float] = []
        while not times or (len(times) < max_reps and spent < share):
            t0 = time.perf_counter()
            explicit_attention(q, k, v)
            times.append((time.perf_counter() - t0) * 1e3)
            spent += times[-1] / 1e3
        points.append(
            LivePoint(t, statistics.median(times), _quantile(times, 0.2), _quantile(times, 0.8), len(times), made)
        )
    return LiveRun(points, head_dim, skipped, time.perf_counter() - start)


@dataclass(frozen=True)
class RecordedSeries:
    """One implementation's ok rows from one recorded file, ordered by T, with fitted slopes."""

    label: str  # device · torch · date
    impl: str
    dtype: str
    batch: int
    heads: int
    head_dim: int
    causal: bool
    seq_len: list[int]
    median_ms: list[float]
    peak_mem_bytes: list[float | None]
    time_slope: float | None
    mem_slope: float | None


def recorded_series(directory: str | Path | None = None) -> tuple[list[RecordedSeries], list[str]]:
    """Series from data/gpu/*.json as written by `python -m attnlab.bench` (none when nothing is recorded).

    The folder is looked up at call time, so a test can point the page at its own.
    """
    runs, skipped = results.load_recorded(results.DEFAULT_RESULTS_DIR if directory is None else directory)
    series: list[RecordedSeries] = []
    for run in runs:
        groups: dict[tuple, list[ResultRow]] = {}
        for row in run.results:
            if row.ok and row.mask in ("full", "causal") and row.kv_heads == row.heads:  # the lesson's rows only
                key = (row.impl, row.dtype, row.batch, row.heads, row.head_dim, row.causal)
                groups.setdefault(key, []).append(row)
        for (impl, dtype, batch, heads, head_dim, causal), rows in groups.items():
            rows.sort(key=lambda r: r.seq_len)
            ts, ms, mem = [r.seq_len for r in rows], [r.median_ms for r in rows], [r.peak_mem_bytes for r in rows]
            mem_slope = loglog_slope(ts, mem) if all(mem) else None
            series.append(
                RecordedSeries(
                    run.label, impl, dtype, batch, heads, head_dim, causal, ts, ms, mem, loglog_slope(ts, ms), mem_slope
                )
            )
    return series, [str(s) for s in skipped]


@dataclass(frozen=True)
class RnnVsAttention:
    """Counts for one sequence of length T (width d): what must run in order, and how far information travels."""

    t: int
    rnn_steps: int  # sequential steps: h_t needs h_{t-1}
    attn_steps: int  # one batched product covers every position
    rnn_path: int  # hops from the first token to the last
    attn_path: int
    rnn_flops: float  # ~ 2 T d^2 (one d x d product per step)
    attn_flops: float  # ~ 4 T^2 d (Q K^T and A V)


def rnn_vs_attention(t: int, d: int = 64) -> RnnVsAttention:
    """Sequential depth and path length: T vs 1; and the price attention pays for it, T^2 d vs T d^2 work."""
    t = int(t)
    return RnnVsAttention(t, t, 1, max(t - 1, 0), 1 if t > 1 else 0, 2.0 * t * d * d, 4.0 * t * t * d)
