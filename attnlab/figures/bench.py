"""Plotly figures for the Benchmark page (no Streamlit).

Benchmark charts draw only what a result row measured: rows whose status is not `ok`, and
values that are None, are left out, never filled in. Titles and names arrive translated
from the page and are escaped here all the same. Legends hang below the plot, clear of the
x axis's labels at any width (`bench_layout.below`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from attnlab.bench.config import IMPLS
from attnlab.bench.memory import format_bytes
from attnlab.bench.row import ResultRow
from attnlab.figures.bench_layout import BELOW, hang, wrap
from attnlab.figures.lines import binary_ticks, decade_ticks, line_figure, loglog_axes, with_slope
from attnlab.figures.palette import current
from attnlab.figures.text import esc
from attnlab.fit import loglog_slope

DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
PLOT_PX = 240  # a chart's plot height on a phone, where its legend wraps most (taller wherever the legend is shorter)
GROUP_FIELDS = ("dtype", "batch", "heads", "kv_heads", "head_dim", "mask")  # `mask` also says causal or not


def _field_text(name: str, value: object, causal_names: tuple[str, str], mask_names: Mapping[str, str]) -> str:
    """How a varying setting is written in a series name: 'float16', 'H=8', 'KV=2', 'd=64', 'causal', 'window 256'."""
    if name == "mask":
        plain = {"causal": causal_names[0], "full": causal_names[1]}
        return mask_names.get(str(value)) or plain.get(str(value)) or str(value)
    short = {"batch": "B", "heads": "H", "kv_heads": "KV", "head_dim": "d"}
    return f"{short[name]}={value}" if name in short else str(value)


def series(
    rows: Sequence[ResultRow],
    causal_names: tuple[str, str] = ("causal", "full"),
    mask_names: Mapping[str, str] | None = None,
) -> dict[str, list[ResultRow]]:
    """The `ok` rows grouped into lines: one per implementation, split further by any setting that varies.

    Returns {series name: rows sorted by seq_len}, in the order of IMPLS. `mask_names` words the masks beyond
    causal and full ('window:256' -> 'window 256'); the spec itself is used otherwise.
    """
    ok = [r for r in rows if r.ok]
    varying = [f for f in GROUP_FIELDS if len({getattr(r, f) for r in ok}) > 1]
    grouped: dict[tuple, list[ResultRow]] = {}
    for r in ok:
        key = (IMPLS.index(r.impl) if r.impl in IMPLS else len(IMPLS), r.impl, *(getattr(r, f) for f in varying))
        grouped.setdefault(key, []).append(r)
    out: dict[str, list[ResultRow]] = {}
    for key in sorted(grouped, key=lambda k: tuple(str(x) for x in k)):
        words = (_field_text(f, v, causal_names, mask_names or {}) for f, v in zip(varying, key[2:], strict=True))
        name = " · ".join([key[1], *words])
        out[name] = sorted(grouped[key], key=lambda r: r.seq_len)
    return out


def _style(name: str, index_by_impl: dict[str, int]) -> dict:
    """Same colour for an implementation on every chart; a dash per variant of it."""
    impl = name.split(" · ")[0]
    palette = current()
    colour = palette.line(IMPLS.index(impl)) if impl in IMPLS else palette.neutral
    n = index_by_impl.get(impl, 0)
    index_by_impl[impl] = n + 1
    return dict(color=colour, dash=DASHES[n % len(DASHES)])


def _figure(
    data: list[dict],
    title: str,
    x_title: str,
    y_title: str,
    log_y: bool = True,
    y_ticks: tuple[list[float], list[str]] | None = None,
) -> go.Figure:
    """A benchmark chart of these traces: T on a log axis at the measured values, legend below."""
    axes = loglog_axes([x for trace in data for x in trace["x"]], x_title, y_title, y_ticks, log_y)
    return hang(line_figure(data, axes, title, PLOT_PX, legend=BELOW, hovermode="closest"), PLOT_PX)


def time_figure(
    rows: Sequence[ResultRow], title: str, x_title: str, y_title: str, slope_word: str = "slope", **kw
) -> go.Figure:
    """Median time vs T on log-log axes, one line per series, p20..p80 as error bars."""
    data = []
    styles: dict[str, int] = {}
    for name, rs in series(rows, **kw).items():
        xs = [r.seq_len for r in rs]
        med = [r.median_ms for r in rs]
        data.append(
            dict(
                type="scatter",
                x=xs,
                y=med,
                mode="lines+markers",
                name=with_slope(name, loglog_slope(xs, med), slope_word),
                line=_style(name, styles),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[r.p80_ms - r.median_ms for r in rs],
                    arrayminus=[r.median_ms - r.p20_ms for r in rs],
                    thickness=1,
                ),
                customdata=[[r.p20_ms, r.p80_ms] for r in rs],
                hovertemplate=f"{esc(name)}<br>T=%{{x}}<br>%{{y:.4g}} ms"
                "<br>p20–p80: %{customdata[0]:.4g}–%{customdata[1]:.4g} ms<extra></extra>",
            )
        )
    values = [v for r in series(rows, **kw).values() for x in r for v in (x.p20_ms, x.p80_ms)]
    return _figure(data, title, x_title, y_title, y_ticks=decade_ticks(values))


def memory_figure(
    rows: Sequence[ResultRow], title: str, x_title: str, y_title: str, slope_word: str = "slope", **kw
) -> go.Figure:
    """Measured peak memory (bytes) vs T on log-log axes; rows without a measurement are left out."""
    data = []
    styles: dict[str, int] = {}
    for name, rs in series(rows, **kw).items():
        rs = [r for r in rs if r.peak_mem_bytes]
        if not rs:
            continue
        xs = [r.seq_len for r in rs]
        mem = [r.peak_mem_bytes for r in rs]
        data.append(
            dict(
                type="scatter",
                x=xs,
                y=mem,
                mode="lines+markers",
                name=with_slope(name, loglog_slope(xs, mem), slope_word),
                line=_style(name, styles),
                customdata=[format_bytes(m) for m in mem],
                hovertemplate=f"{esc(name)}<br>T=%{{x}}<br>%{{customdata}}<extra></extra>",
            )
        )
    values = [y for trace in data for y in trace["y"]]
    return _figure(data, title, x_title, y_title, y_ticks=binary_ticks(values))


def tflops_figure(
    rows: Sequence[ResultRow],
    title: str,
    x_title: str,
    y_title: str,
    peaks: dict[str, float] | None = None,
    peak_word: str = "of peak",
    **kw,
) -> go.Figure:
    """Achieved TFLOP/s vs T (log x), with the share of the device's datasheet peak in the hover when known."""
    data = []
    styles: dict[str, int] = {}
    for name, rs in series(rows, **kw).items():
        rs = [r for r in rs if r.tflops is not None]
        if not rs:
            continue
        shares = []
        for r in rs:
            peak = (peaks or {}).get(r.dtype)
            shares.append(f" ({r.tflops / peak:.1%} {esc(peak_word)})" if peak else "")
        data.append(
            dict(
                type="scatter",
                x=[r.seq_len for r in rs],
                y=[r.tflops for r in rs],
                mode="lines+markers",
                name=esc(name),
                line=_style(name, styles),
                customdata=shares,
                hovertemplate=f"{esc(name)}<br>T=%{{x}}<br>%{{y:.4g}} TFLOP/s%{{customdata}}<extra></extra>",
            )
        )
    return _figure(data, title, x_title, y_title, log_y=False)


def compare_figure(
    sets: Sequence[tuple[str, Sequence[ResultRow], dict[str, float]]],
    title: str,
    x_title: str,
    y_title: str,
    share: bool = False,
) -> go.Figure:
    """One line per result set (label, rows, its peaks) against T: TFLOP/s, or with `share` the % of its peak.

    The rows are one slice already (one implementation, dtype, head size and mask); a set with no peak for
    its dtype draws nothing in the share chart, and rows that were not measured are never drawn.
    """
    data = []
    palette = current()
    for n, (label, rows, peaks) in enumerate(sets):
        rs = sorted((r for r in rows if r.ok and r.tflops is not None), key=lambda r: r.seq_len)
        if share:
            rs = [r for r in rs if peaks.get(r.dtype)]
        if not rs:
            continue
        ys = [100 * r.tflops / peaks[r.dtype] if share else r.tflops for r in rs]
        unit = "%" if share else " TFLOP/s"
        data.append(
            dict(
                type="scatter",
                x=[r.seq_len for r in rs],
                y=ys,
                mode="lines+markers",
                name=wrap(esc(label)),
                line=dict(color=palette.line(n), dash=DASHES[n % len(DASHES)]),
                hovertemplate=f"{esc(label)}<br>T=%{{x}}<br>%{{y:.4g}}{unit}<extra></extra>",
            )
        )
    return _figure(data, title, x_title, y_title, log_y=False)
