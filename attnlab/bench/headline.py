"""What a recorded GPU run says at a glance: TFLOP/s against T in bfloat16 at head size 128, and three comparisons.

`headline(results, env, label)` reads one result set (a file from data/gpu/, an upload) and returns a `Headline`, or
None when the set has no `ok` row at that dtype and head size. Every number in it is one the file measured or a
ratio of two such numbers: the lines (each implementation's TFLOP/s against T, without a mask and causal, every
head its own keys and values), the fastest SDPA row without a mask and its share of the device's datasheet peak,
attnlab's explicit path against SDPA at the longest T both measured (how many times its time), and FlexAttention
against SDPA given the dense mask under a sliding window at the longest T both measured. The page writes the
sentences from these numbers in the reader's language; nothing here is text to show.

Choices the issue left open: "fastest" is among PyTorch's SDPA rows (`sdpa` free and each forced backend), the
headline's subject; the explicit path is held against the free `sdpa` (what a user calls); the window study takes
SDPA as `attnlab.bench.studies` does (the free `sdpa` first). `best_first` orders several runs by their fastest
row, so the page opens on the best recorded GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attnlab.bench.config import IMPLS, SDPA_BACKENDS
from attnlab.bench.maskrule import parse_mask
from attnlab.bench.row import ResultRow
from attnlab.bench.studies import window_studies

DTYPE = "bfloat16"  # the dtype models are trained and served in
HEAD_DIM = 128  # Llama's head size
MASKS = ("full", "causal")
SDPA = ("sdpa", *SDPA_BACKENDS)


@dataclass(frozen=True)
class Line:
    """One implementation's TFLOP/s against T under one mask."""

    impl: str
    mask: str  # full or causal
    seq_lens: tuple[int, ...]
    tflops: tuple[float, ...]


@dataclass(frozen=True)
class Fastest:
    """The fastest row: which implementation, at which T, how many TFLOP/s, and the share of peak (None: unknown)."""

    impl: str
    seq_len: int
    tflops: float
    share: float | None


@dataclass(frozen=True)
class Versus:
    """Two implementations timed at the same T: `slow_ms / fast_ms` is how many times the one takes the other."""

    impl: str  # the first of the two (explicit; flex)
    other: str  # what it is held against (sdpa)
    seq_len: int
    impl_ms: float
    other_ms: float
    window: int = 0  # the window both ran under (0: none)

    @property
    def ratio(self) -> float:
        """How many times `impl` takes `other`'s time (below 1: it is faster)."""
        return self.impl_ms / self.other_ms


@dataclass(frozen=True)
class Headline:
    """One result set's headline: where it ran, its lines, and the three comparisons (None where a set lacks rows)."""

    label: str  # device · torch · date
    device: str
    peak: float | None  # the device's datasheet TFLOP/s for DTYPE
    lines: tuple[Line, ...]
    fastest: Fastest | None
    explicit: Versus | None
    window: Versus | None
    dtype: str = DTYPE
    head_dim: int = HEAD_DIM

    @property
    def top(self) -> float:
        """The highest TFLOP/s any line reached (0 when none)."""
        return max((y for line in self.lines for y in line.tflops), default=0.0)


def _plain(rows: Sequence[ResultRow], dtype: str, head_dim: int) -> list[ResultRow]:
    """The measured rows of the headline's slice: this dtype and head size, every head its own keys and values."""
    return [
        r
        for r in rows
        if r.ok and r.tflops is not None and (r.dtype, r.head_dim) == (dtype, head_dim) and r.kv_heads == r.heads
    ]


def lines_of(rows: Sequence[ResultRow]) -> tuple[Line, ...]:
    """One line per (mask, implementation), in IMPLS order, each sorted by T."""
    out = []
    for mask in MASKS:
        for impl in IMPLS:
            rs = sorted((r for r in rows if r.mask == mask and r.impl == impl), key=lambda r: r.seq_len)
            if rs:
                out.append(Line(impl, mask, tuple(r.seq_len for r in rs), tuple(float(r.tflops) for r in rs)))
    return tuple(out)


def fastest(rows: Sequence[ResultRow], peak: float | None) -> Fastest | None:
    """The SDPA row without a mask that reached the most TFLOP/s."""
    sdpa = [r for r in rows if r.mask == "full" and r.impl in SDPA]
    if not sdpa:
        return None
    best = max(sdpa, key=lambda r: r.tflops)
    return Fastest(best.impl, best.seq_len, float(best.tflops), best.tflops / peak if peak else None)


def explicit_vs_sdpa(rows: Sequence[ResultRow]) -> Versus | None:
    """attnlab's explicit path against the free `sdpa` without a mask, at the longest T both measured."""
    by = {(r.impl, r.seq_len): r for r in rows if r.mask == "full"}
    common = [t for (impl, t) in by if impl == "explicit" and ("sdpa", t) in by]
    if not common:
        return None
    t = max(common)
    return Versus("explicit", "sdpa", t, by["explicit", t].median_ms, by["sdpa", t].median_ms)


def window_vs_dense(rows: Sequence[ResultRow], dtype: str, head_dim: int) -> Versus | None:
    """FlexAttention against SDPA given the dense mask, under a sliding window, at the longest T both measured."""
    studies = [s for s in window_studies(rows) if (s.first.dtype, s.first.head_dim) == (dtype, head_dim)]
    studies = [s for s in studies if s.first.kv_heads == s.first.heads] or studies
    if not studies:
        return None
    study = max(studies, key=lambda s: s.lengths[-1])
    flex, sdpa = study.flex[-1], study.sdpa[-1]
    window = parse_mask(flex.mask).size or 0
    return Versus("flex", sdpa.impl, flex.seq_len, flex.median_ms, sdpa.median_ms, window)


def headline(
    results: Sequence[ResultRow], env: dict, label: str, dtype: str = DTYPE, head_dim: int = HEAD_DIM
) -> Headline | None:
    """The headline of one result set, or None when it measured nothing at this dtype and head size."""
    rows = _plain(results, dtype, head_dim)
    if not rows:
        return None
    peak = (env.get("peak_tflops") or {}).get(dtype)
    return Headline(
        label=label,
        device=str(env.get("device_name") or ""),
        peak=peak,
        lines=lines_of(rows),
        fastest=fastest(rows, peak),
        explicit=explicit_vs_sdpa(rows),
        window=window_vs_dense(results, dtype, head_dim),
        dtype=dtype,
        head_dim=head_dim,
    )


def best_first(headlines: Sequence[Headline]) -> list[Headline]:
    """Headlines ordered by their fastest SDPA row, the best first (those without one last, in their order)."""
    return sorted(headlines, key=lambda h: -(h.fastest.tflops if h.fastest else -1.0))
