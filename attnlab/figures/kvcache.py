"""The key/value cache page's charts: cache size against context, the cache per token, what a window cache keeps.

No Streamlit. Bytes are written in decimal units (kB, MB, GB), as GPU memory is sold ("80 GB").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.lines import line_figure, rule
from attnlab.figures.matrix import matrix_figure
from attnlab.figures.palette import current
from attnlab.figures.text import esc

UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")


def human_bytes(n: float) -> str:
    """1.3e11 -> '130 GB': three significant digits, decimal units."""
    if n < 1000:
        return f"{n:.3g} B"
    power = min(int(math.log10(n) // 3), len(UNITS) - 1)
    return f"{n / 1000**power:.3g} {UNITS[power]}"


def byte_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """Powers of ten covering the values on a log axis (every other one past eight decades), written in units."""
    pos = [v for v in values if v > 0]
    lo, hi = math.floor(math.log10(min(pos))), math.ceil(math.log10(max(pos)))
    step = 1 if hi - lo <= 8 else 2
    ticks = [10.0**e for e in range(lo, hi + 1, step)]
    return ticks, [human_bytes(x) for x in ticks]


def cache_figure(
    tokens: Sequence[int],
    series: Mapping[str, Sequence[float]],
    names: Mapping[str, str],
    *,
    free: float | None,
    context: int,
    title: str,
) -> go.Figure:
    """Cache bytes against context length on log-log axes, one line per kind; dashed: the memory left beside the
    weights (`free`, when some is) and the context asked for. `names` has each series' label, and `x`, `y`, `free`."""
    palette = current()
    data = [
        dict(
            type="scatter",
            x=list(tokens),
            y=[max(float(y), 1.0) for y in ys],  # a log axis cannot show 0 bytes (0 tokens): 1 B instead
            mode="lines+markers",
            name=esc(names[key]),
            line=dict(color=palette.line(i)),
        )
        for i, (key, ys) in enumerate(series.items())
    ]
    every = [y for trace in data for y in trace["y"]] + ([free] if free else [])
    ticks = byte_ticks(every)
    x_ticks = [10**e for e in range(0, 8) if tokens[0] <= 10**e <= tokens[-1]]
    axes = dict(
        xaxis=dict(
            type="log", title=dict(text=esc(names["x"])), tickvals=x_ticks, ticktext=[f"{x:,}" for x in x_ticks]
        ),
        yaxis=dict(type="log", title=dict(text=esc(names["y"])), tickvals=ticks[0], ticktext=ticks[1]),
    )
    shapes = [rule(x=context, dash="dot", color=palette.neutral)]
    annotations = []
    if free:
        shapes.append(rule(y=free, dash="dash", color=palette.highlight))
        note = dict(x=0.0, xref="x domain", y=math.log10(free), yref="y", xanchor="left", yanchor="bottom")
        annotations.append(dict(note, text=esc(names["free"]), showarrow=False))
    return line_figure(data, axes, title, 420, shapes=shapes, annotations=annotations)


def per_token_figure(labels: Sequence[str], numbers: Sequence[float], title: str, y_title: str) -> go.Figure:
    """Numbers one token adds to one layer's cache, one bar per kind of attention, each bar labelled."""
    palette = current()
    bar = dict(
        type="bar",
        x=[esc(s) for s in labels],
        y=list(numbers),
        text=[f"{v:g}" for v in numbers],
        textposition="outside",
        marker=dict(color=[palette.line(i) for i in range(len(labels))]),
        showlegend=False,
    )
    axes = dict(yaxis=dict(title=dict(text=esc(y_title)), rangemode="tozero"), xaxis=dict(type="category"))
    return line_figure([bar], axes, title, 300)


def kept_figure(
    m: np.ndarray, rows: Sequence[str], cols: Sequence[str], kept: np.ndarray, evicted: str, **kw
) -> go.Figure:
    """A cache's numbers over every token so far, where `kept` (broadcast to m) is False greyed: that token was
    evicted (the hover says `evicted`; no value is written, none is kept)."""
    shown = np.where(np.broadcast_to(np.asarray(kept, dtype=bool), np.shape(m)), np.asarray(m, dtype=float), -np.inf)
    fig = matrix_figure(shown, rows, cols, blocked_text=evicted, **kw)
    for trace in fig.to_dict()["data"]:
        if trace.get("name") == "blocked":  # the grey layer: no "−∞" written, there is no score here
            trace["text"] = None
            trace["texttemplate"] = None
            trace["hovertemplate"] = f"%{{y}}: {esc(evicted)}<extra></extra>"
    return fig
