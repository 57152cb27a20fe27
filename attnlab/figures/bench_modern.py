"""Plotly figures of the Benchmark page's long-context studies (no Streamlit): sliding window and grouped heads.

`window_figure` draws FlexAttention's and SDPA's time against T under one sliding window, with the T where the two
cross marked by a dashed line; `kv_time_figure` and `kv_memory_figure` draw time (on a log axis: the math backend
takes some fifty times the fused kernels' time, which a linear axis flattened onto zero), and the bytes K and V take,
against the number of key/value heads. Only measured rows arrive here (`attnlab.bench.studies`); the K/V bytes
are arithmetic on each row's shape. Titles and names arrive translated and are escaped here.
"""

from __future__ import annotations

import math
from dataclasses import replace

import plotly.graph_objects as go

from attnlab.bench.config import IMPLS
from attnlab.bench.memory import format_bytes
from attnlab.bench.row import ResultRow
from attnlab.bench.studies import KvStudy, WindowStudy, kv_bytes
from attnlab.figures.bench import PLOT_PX
from attnlab.figures.bench_layout import BELOW, hang
from attnlab.figures.lines import decade_ticks, line_figure, loglog_axes
from attnlab.figures.palette import current
from attnlab.figures.text import esc


def _colour(impl: str) -> str:
    """The colour an implementation has on every Benchmark chart."""
    palette = current()
    return palette.line(IMPLS.index(impl)) if impl in IMPLS else palette.neutral


def _timed(rows: list[ResultRow], x: list[int], name: str, impl: str, dash: str = "solid") -> dict:
    """Median times with p20..p80 bars against `x`, one trace."""
    return dict(
        type="scatter",
        x=x,
        y=[r.median_ms for r in rows],
        mode="lines+markers",
        name=esc(name),
        line=dict(color=_colour(impl), dash=dash),
        error_y=dict(
            type="data",
            symmetric=False,
            array=[r.p80_ms - r.median_ms for r in rows],
            arrayminus=[r.median_ms - r.p20_ms for r in rows],
            thickness=1,
        ),
        hovertemplate=f"{esc(name)}<br>%{{x}}<br>%{{y:.4g}} ms<extra></extra>",
    )


def window_figure(
    study: WindowStudy, title: str, x_title: str, y_title: str, names: tuple[str, str], crossing_text: str
) -> go.Figure:
    """Time against T for FlexAttention and SDPA under one window, log-log; the crossing as a dashed vertical line.

    `names` label the two lines (FlexAttention, SDPA with a dense mask); `crossing_text` labels the line, drawn only
    when the two curves cross within the measured lengths.
    """
    ts = study.lengths
    data = [
        _timed(study.flex, ts, names[0], "flex"),
        _timed(study.sdpa, ts, names[1], study.sdpa[0].impl, dash="dash"),
    ]
    values = [v for r in (*study.flex, *study.sdpa) for v in (r.p20_ms, r.p80_ms)]
    axes = loglog_axes(ts, x_title, y_title, decade_ticks(values))
    extra: dict = {}
    if study.crossing is not None:
        line = dict(type="line", xref="x", yref="paper", x0=study.crossing, x1=study.crossing, y0=0, y1=1)
        extra["shapes"] = [dict(line, line=dict(color=current().neutral, dash="dash", width=1.5))]
        at = math.log10(study.crossing)  # an annotation on a log axis is placed in log10 units (a shape is not)
        note = dict(x=at, xref="x", y=1.0, yref="paper", yanchor="bottom", showarrow=False)
        extra["annotations"] = [dict(note, text=esc(crossing_text), font=dict(size=12))]
    return hang(line_figure(data, axes, title, PLOT_PX, legend=BELOW, hovermode="closest", **extra), PLOT_PX)


def _kv_axis(study: KvStudy, x_title: str) -> dict:
    """The number of key/value heads on a log2 axis, ticked at the counts measured."""
    kvs = study.kv_heads
    return dict(type="log", title=dict(text=esc(x_title)), tickvals=kvs, ticktext=[str(k) for k in kvs])


def kv_time_figure(study: KvStudy, title: str, x_title: str, y_title: str) -> go.Figure:
    """Time against the number of key/value heads at one T, one line per implementation, on a log time axis: each
    line's flatness reads the same whatever its height, and a backend fifty times slower leaves the others visible."""
    ordered = sorted(study.lines, key=lambda i: IMPLS.index(i) if i in IMPLS else len(IMPLS))
    data = [_timed(study.lines[i], [r.kv_heads for r in study.lines[i]], i, i) for i in ordered]
    values = [v for rows in study.lines.values() for r in rows for v in (r.p20_ms, r.p80_ms)]
    ticks = decade_ticks(values)
    yaxis = dict(type="log", title=dict(text=esc(y_title)), tickvals=ticks[0], ticktext=ticks[1])
    axes = dict(xaxis=_kv_axis(study, x_title), yaxis=yaxis)
    return hang(line_figure(data, axes, title, PLOT_PX, legend=BELOW, hovermode="closest"), PLOT_PX)


def byte_ticks(top: int, n: int = 4) -> tuple[list[int], list[str]]:
    """Evenly spaced ticks from 0 to `top` on a linear axis, written as binary sizes ('0 B', '32.0 MiB', ...)."""
    values = [round(top * i / n) for i in range(n + 1)]
    return values, [format_bytes(v) for v in values]


def kv_memory_figure(study: KvStudy, title: str, x_title: str, y_title: str, name: str) -> go.Figure:
    """The bytes K and V take at each number of key/value heads (2 x B x kv x T x d x item), on a linear axis: they
    grow in proportion to the count."""
    first = study.first
    by_kv = {kv: kv_bytes(replace(first, kv_heads=kv)) for kv in study.kv_heads}
    data = [
        dict(
            type="bar",
            x=[str(k) for k in by_kv],
            y=list(by_kv.values()),
            name=esc(name),
            marker=dict(color=current().neutral),
            customdata=[format_bytes(b) for b in by_kv.values()],
            hovertemplate=f"{esc(name)}<br>%{{x}}<br>%{{customdata}}<extra></extra>",
        )
    ]
    ticks = byte_ticks(max(by_kv.values()))
    yaxis = dict(type="linear", title=dict(text=esc(y_title)), tickvals=ticks[0], ticktext=ticks[1])
    axes = dict(xaxis=dict(type="category", title=dict(text=esc(x_title))), yaxis=yaxis)
    return hang(line_figure(data, axes, title, PLOT_PX, legend=BELOW, hovermode="closest", showlegend=False), PLOT_PX)
