"""What a result set says about long-context attention (contract 15): the sliding-window and grouped-heads studies.

Pure functions over `ResultRow`s, whoever measured them (the live run, a recorded GPU file, an upload):
`window_studies` pairs FlexAttention's rows with SDPA's under one sliding window across T and finds where their
times cross (FlexAttention skips the blocks the window leaves empty, SDPA given a dense mask cannot, so past
some T the first wins); `kv_studies` lines up rows that differ only in their number of key/value heads, with the
bytes K and V take at each (what a key/value cache holds per layer). Only `ok` rows count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from attnlab.bench.row import ResultRow

SDPA_ORDER = ("sdpa", "sdpa-efficient", "sdpa-cudnn", "sdpa-math", "sdpa-flash")  # which SDPA row speaks for SDPA
ITEM_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


@dataclass(frozen=True)
class WindowStudy:
    """FlexAttention and one SDPA implementation under one sliding window, at the lengths both measured."""

    flex: list[ResultRow]  # sorted by T
    sdpa: list[ResultRow]  # the same lengths
    crossing: float | None  # the T where the two times cross (log-log interpolation), None when they never do

    @property
    def first(self) -> ResultRow:
        """A row that names the study's settings."""
        return self.flex[0]

    @property
    def lengths(self) -> list[int]:
        return [r.seq_len for r in self.flex]

    @property
    def flex_wins_at(self) -> list[int]:
        """The lengths where FlexAttention took less time than SDPA."""
        return [f.seq_len for f, s in zip(self.flex, self.sdpa, strict=True) if f.median_ms < s.median_ms]


@dataclass(frozen=True)
class KvStudy:
    """Rows that differ only in their key/value heads, per implementation, at one T."""

    lines: dict[str, list[ResultRow]]  # impl -> rows sorted by kv_heads (at least two of them)

    @property
    def first(self) -> ResultRow:
        """A row that names the study's settings."""
        return next(iter(self.lines.values()))[0]

    @property
    def kv_heads(self) -> list[int]:
        """Every key/value head count some line measured, ascending."""
        return sorted({r.kv_heads for rows in self.lines.values() for r in rows})


def kv_bytes(row: ResultRow) -> int:
    """Bytes of K and V for the row's shape: 2 x B x kv_heads x T x d x item (a key/value cache's share)."""
    return 2 * row.batch * row.kv_heads * row.seq_len * row.head_dim * ITEM_BYTES[row.dtype]


def crossing(lengths: Sequence[int], a_ms: Sequence[float], b_ms: Sequence[float]) -> float | None:
    """The first T where curve a passes below curve b (or above), interpolated on log-log axes; None if never."""
    gaps = [math.log(a) - math.log(b) for a, b in zip(a_ms, b_ms, strict=True)]
    for i in range(1, len(gaps)):
        g0, g1 = gaps[i - 1], gaps[i]
        if g0 == 0.0:
            return float(lengths[i - 1])
        if g0 * g1 < 0 or g1 == 0.0:
            x0, x1 = math.log(lengths[i - 1]), math.log(lengths[i])
            return float(math.exp(x0 + (x1 - x0) * g0 / (g0 - g1)))
    return None


def _settings(r: ResultRow) -> tuple:
    """What must be equal for two rows to share a line: all but the implementation, T and key/value heads."""
    return (r.device, r.dtype, r.batch, r.heads, r.head_dim, r.mask)


def window_studies(rows: Sequence[ResultRow]) -> list[WindowStudy]:
    """Every (settings, key/value heads) under a sliding window where flex and an SDPA row share at least two T."""
    groups: dict[tuple, dict[str, dict[int, ResultRow]]] = {}
    for r in rows:
        if r.ok and r.mask.startswith("window:") and (r.impl == "flex" or r.impl in SDPA_ORDER):
            groups.setdefault((*_settings(r), r.kv_heads), {}).setdefault(r.impl, {})[r.seq_len] = r
    out = []
    for key in sorted(groups, key=str):
        by_impl = groups[key]
        flex = by_impl.get("flex", {})
        for impl in SDPA_ORDER:
            common = sorted(set(flex) & set(by_impl.get(impl, {})))
            if len(common) >= 2:
                f, s = [flex[t] for t in common], [by_impl[impl][t] for t in common]
                out.append(WindowStudy(f, s, crossing(common, [r.median_ms for r in f], [r.median_ms for r in s])))
                break
    return out


def kv_studies(rows: Sequence[ResultRow]) -> list[KvStudy]:
    """Every (settings, T) where some implementation measured two or more numbers of key/value heads."""
    groups: dict[tuple, dict[str, dict[int, ResultRow]]] = {}
    for r in rows:
        if r.ok:
            groups.setdefault((*_settings(r), r.seq_len), {}).setdefault(r.impl, {})[r.kv_heads] = r
    out = []
    for key in sorted(groups, key=lambda k: (str(k[:-1]), k[-1])):
        lines = {impl: [by[kv] for kv in sorted(by)] for impl, by in groups[key].items() if len(by) >= 2}
        if lines:
            out.append(KvStudy(lines))
    return out
