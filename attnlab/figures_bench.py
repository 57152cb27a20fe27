"""Plotly figures for the Benchmark and Tiled-attention pages (no Streamlit).

Benchmark charts draw only what a result row measured: rows whose status is not `ok`, and
values that are None, are left out, never filled in. Titles and names arrive translated
from the page and are escaped here all the same.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.bench.harness import IMPLS
from attnlab.bench.limits import format_bytes
from attnlab.figures import matrix_figure

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
GROUP_FIELDS = ("dtype", "batch", "heads", "head_dim", "causal")


def _esc(text: str) -> str:
    """Text made safe for Plotly, which renders some HTML in labels."""
    return html.escape(str(text), quote=False)


def _field_text(name: str, value: object, causal_names: tuple[str, str]) -> str:
    """How a varying setting is written in a series name: 'float16', 'H=8', 'd=64', 'causal'."""
    if name == "causal":
        return causal_names[0] if value else causal_names[1]
    short = {"batch": "B", "heads": "H", "head_dim": "d"}
    return f"{short[name]}={value}" if name in short else str(value)


def series(rows: Sequence[dict], causal_names: tuple[str, str] = ("causal", "full")) -> dict[str, list[dict]]:
    """The `ok` rows grouped into lines: one per implementation, split further by any setting that varies.

    Returns {series name: rows sorted by seq_len}, in the order of IMPLS.
    """
    ok = [r for r in rows if r.get("status") == "ok"]
    varying = [f for f in GROUP_FIELDS if len({r[f] for r in ok}) > 1]
    grouped: dict[tuple, list[dict]] = {}
    for r in ok:
        key = (IMPLS.index(r["impl"]) if r["impl"] in IMPLS else len(IMPLS), r["impl"], *(r[f] for f in varying))
        grouped.setdefault(key, []).append(r)
    out: dict[str, list[dict]] = {}
    for key in sorted(grouped, key=lambda k: tuple(str(x) for x in k)):
        name = " · ".join([key[1], *(_field_text(f, v, causal_names) for f, v in zip(varying, key[2:], strict=True))])
        out[name] = sorted(grouped[key], key=lambda r: r["seq_len"])
    return out


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Least-squares slope of log y against log x (None with fewer than two distinct positive points)."""
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if x and y and x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    lx, ly = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(lx, ly, 1)[0])


def _style(name: str, index_by_impl: dict[str, int]) -> dict:
    """Same colour for an implementation on every chart; a dash per variant of it."""
    impl = name.split(" · ")[0]
    colour = COLOURS[IMPLS.index(impl) % len(COLOURS)] if impl in IMPLS else "#7f7f7f"
    n = index_by_impl.get(impl, 0)
    index_by_impl[impl] = n + 1
    return dict(color=colour, dash=DASHES[n % len(DASHES)])


def decade_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """1-2-5 ticks covering the values on a log axis, written plainly ('0.05', '2', '100')."""
    pos = [float(v) for v in values if v and v > 0]
    if not pos:
        return [], []
    lo, hi = math.floor(math.log10(min(pos))), math.ceil(math.log10(max(pos)))
    steps = (1, 2, 5) if hi - lo <= 3 else (1,)
    ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in steps]
    ticks = [x for x in ticks if min(pos) / 2.5 <= x <= max(pos) * 2.5]
    return ticks, [f"{x:g}" for x in ticks]


def binary_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """Powers of two covering byte counts on a log axis, written as '4.0 KiB', at most about 8 of them."""
    pos = [float(v) for v in values if v and v > 0]
    if not pos:
        return [], []
    lo, hi = math.floor(math.log2(min(pos))), math.ceil(math.log2(max(pos)))
    step = max(1, -(-(hi - lo) // 7))
    ticks = [2.0**e for e in range(lo, hi + 1, step)]
    return ticks, [format_bytes(x) for x in ticks]


def _layout(
    fig: go.Figure,
    title: str,
    x_title: str,
    y_title: str,
    log_y: bool = True,
    y_ticks: tuple[list[float], list[str]] | None = None,
) -> go.Figure:
    xs = sorted({x for tr in fig.data for x in (tr.x or ())})
    fig.update_xaxes(type="log", title=_esc(x_title), tickvals=xs, ticktext=[str(x) for x in xs])
    fig.update_yaxes(type="log" if log_y else "linear", title=_esc(y_title), rangemode=None if log_y else "tozero")
    if y_ticks and y_ticks[0]:
        fig.update_yaxes(tickvals=y_ticks[0], ticktext=y_ticks[1])
    fig.update_layout(
        template="attnlab",
        height=400,
        title=dict(text=_esc(title), x=0.0),
        legend=dict(orientation="h", yanchor="top", y=-0.25, x=0.0),
        margin=dict(l=10, r=10, t=40, b=10),
        hovermode="closest",
    )
    return fig


def _name(name: str, slope: float | None, slope_word: str) -> str:
    return _esc(name) if slope is None else f"{_esc(name)} ({_esc(slope_word)} {slope:.2f})"


def time_figure(
    rows: Sequence[dict], title: str, x_title: str, y_title: str, slope_word: str = "slope", **kw
) -> go.Figure:
    """Median time vs T on log-log axes, one line per series, p20..p80 as error bars."""
    fig = go.Figure()
    styles: dict[str, int] = {}
    for name, rs in series(rows, **kw).items():
        xs = [r["seq_len"] for r in rs]
        med = [r["median_ms"] for r in rs]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=med,
                mode="lines+markers",
                name=_name(name, loglog_slope(xs, med), slope_word),
                line=_style(name, styles),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[r["p80_ms"] - r["median_ms"] for r in rs],
                    arrayminus=[r["median_ms"] - r["p20_ms"] for r in rs],
                    thickness=1,
                ),
                customdata=[[r["p20_ms"], r["p80_ms"]] for r in rs],
                hovertemplate=f"{_esc(name)}<br>T=%{{x}}<br>%{{y:.4g}} ms"
                "<br>p20–p80: %{customdata[0]:.4g}–%{customdata[1]:.4g} ms<extra></extra>",
            )
        )
    values = [v for r in series(rows, **kw).values() for x in r for v in (x["p20_ms"], x["p80_ms"])]
    return _layout(fig, title, x_title, y_title, y_ticks=decade_ticks(values))


def memory_figure(
    rows: Sequence[dict], title: str, x_title: str, y_title: str, slope_word: str = "slope", **kw
) -> go.Figure:
    """Measured peak memory (bytes) vs T on log-log axes; rows without a measurement are left out."""
    fig = go.Figure()
    styles: dict[str, int] = {}
    for name, rs in series(rows, **kw).items():
        rs = [r for r in rs if r.get("peak_mem_bytes")]
        if not rs:
            continue
        xs = [r["seq_len"] for r in rs]
        mem = [r["peak_mem_bytes"] for r in rs]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=mem,
                mode="lines+markers",
                name=_name(name, loglog_slope(xs, mem), slope_word),
                line=_style(name, styles),
                customdata=[format_bytes(m) for m in mem],
                hovertemplate=f"{_esc(name)}<br>T=%{{x}}<br>%{{customdata}}<extra></extra>",
            )
        )
    values = [y for tr in fig.data for y in tr.y]
    return _layout(fig, title, x_title, y_title, y_ticks=binary_ticks(values))


def tflops_figure(
    rows: Sequence[dict],
    title: str,
    x_title: str,
    y_title: str,
    peaks: dict[str, float] | None = None,
    peak_word: str = "of peak",
    **kw,
) -> go.Figure:
    """Achieved TFLOP/s vs T (log x), with the share of the device's datasheet peak in the hover when known."""
    fig = go.Figure()
    styles: dict[str, int] = {}
    for name, rs in series(rows, **kw).items():
        rs = [r for r in rs if r.get("tflops") is not None]
        if not rs:
            continue
        shares = []
        for r in rs:
            peak = (peaks or {}).get(r["dtype"])
            shares.append(f" ({r['tflops'] / peak:.1%} {_esc(peak_word)})" if peak else "")
        fig.add_trace(
            go.Scatter(
                x=[r["seq_len"] for r in rs],
                y=[r["tflops"] for r in rs],
                mode="lines+markers",
                name=_esc(name),
                line=_style(name, styles),
                customdata=shares,
                hovertemplate=f"{_esc(name)}<br>T=%{{x}}<br>%{{y:.4g}} TFLOP/s%{{customdata}}<extra></extra>",
            )
        )
    return _layout(fig, title, x_title, y_title, log_y=False)


# --- the tiled walkthrough ------------------------------------------------------------------------


def tile_grid_figure(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    block_q: int,
    block_k: int,
    tile: tuple[tuple[int, int], tuple[int, int]] | None,
    *,
    title: str | None = None,
    **kw,
) -> go.Figure:
    """A full (T_q, T_k) matrix with the block boundaries drawn and the current tile outlined."""
    fig = matrix_figure(m, rows, cols, title=_esc(title) if title else None, **kw)
    n_r, n_c = len(rows), len(cols)
    for c in range(block_k, n_c, block_k):
        fig.add_shape(type="line", x0=c - 0.5, x1=c - 0.5, y0=-0.5, y1=n_r - 0.5, line=dict(color="#555", dash="dot"))
    for r in range(block_q, n_r, block_q):
        fig.add_shape(type="line", y0=r - 0.5, y1=r - 0.5, x0=-0.5, x1=n_c - 0.5, line=dict(color="#555", dash="dot"))
    if tile is not None:
        (r0, r1), (c0, c1) = tile
        fig.add_shape(
            type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5, line=dict(color="#e4572e", width=4)
        )
    return fig
