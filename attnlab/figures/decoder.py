"""Plotly builders for the trained-decoder page: heads side by side, training curves, maps of restored shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.grid import grid_figure
from attnlab.figures.lines import line_figure, scatter
from attnlab.figures.matrix import matrix_figure
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import Prebuilt
from attnlab.figures.text import esc, unique_labels


def layer_heads_figure(
    attentions: np.ndarray, titles: Sequence[str], tokens: Sequence[str], query_name: str, key_name: str
) -> go.Figure:
    """One layer's causal weights, one map per head, sharing one 0..1 scale."""  # attentions: (H, T, T)
    return grid_figure(
        list(attentions), titles, tokens, tokens, kind="prob", row_name=query_name, col_name=key_name, text=False
    )


def curves_figure(
    steps: Sequence[int],
    series: Sequence[tuple[str, Sequence[float | None]]],
    current_step: int,
    title: str,
    x_title: str,
    y_title: str,
    y_range: tuple[float, float] | None = None,
    marks: Sequence[tuple[int, str]] = (),
) -> go.Figure:
    """Named series over training steps, the checkpoint on screen marked by a vertical rule (and `marks`, labelled)."""
    palette = current()
    data = [
        scatter(
            list(steps),
            [None if v is None else float(v) for v in values],
            name,
            mode="lines+markers",
            line=dict(color=palette.line(i)),
            marker=dict(size=5, color=palette.line(i)),
        )
        for i, (name, values) in enumerate(series)
    ]
    shown = dict(color=palette.highlight, width=2, dash="dot")
    shapes = [dict(type="line", x0=current_step, x1=current_step, xref="x", y0=0, y1=1, yref="paper", line=shown)]
    notes = []
    for step, text in marks:  # what add_vline(x, annotation_text=text) writes
        mark = dict(color=palette.line(3), width=2)
        shapes.append(dict(type="line", x0=step, x1=step, xref="x", y0=0, y1=1, yref="y domain", line=mark))
        notes.append(
            dict(showarrow=False, text=esc(text), x=step, xanchor="left", xref="x", y=1, yanchor="top", yref="y domain")
        )
    axes = dict(
        xaxis=dict(title=dict(text=esc(x_title)), gridcolor=palette.grid),
        yaxis=dict(title=dict(text=esc(y_title)), gridcolor=palette.grid, range=list(y_range) if y_range else None),
        shapes=shapes,
        **({"annotations": notes} if notes else {}),
    )
    return line_figure(data, axes, title, 300)


def shares_figure(shares: np.ndarray, rows: Sequence[str], cols: Sequence[str]) -> go.Figure:
    """Shares of a gap (1 = all of it) with their values, on one scale from -1 to 1 (wider if a share is)."""
    fig = matrix_figure(shares, rows, cols, text=True)
    spec = fig.to_dict()
    finite = np.abs(shares[np.isfinite(shares)])
    bound = max(1.0, float(finite.max()) if finite.size else 1.0)
    first = dict(spec["data"][0], zmin=-bound, zmax=bound, zmid=0.0)
    return Prebuilt({**spec, "data": [first, *spec["data"][1:]]})


def click_targets(fig: go.Figure, rows: Sequence[str], cols: Sequence[str], values: np.ndarray) -> go.Figure:
    """The figure with an invisible point over every cell (heatmaps send no click events; points do).

    Point i is cell (i // len(cols), i % len(cols)); its hover shows the cell's value.
    """
    spec = fig.to_dict()
    x, y = unique_labels(cols), unique_labels(rows)
    cells = [(r, c) for r in range(len(rows)) for c in range(len(cols))]
    points = dict(
        type="scatter",
        mode="markers",
        x=[x[c] for _, c in cells],
        y=[y[r] for r, _ in cells],
        customdata=[float(values[r, c]) for r, c in cells],
        marker=dict(size=40, opacity=0, symbol="square"),
        hovertemplate="%{y} · %{x}: <b>%{customdata:.2f}</b><extra></extra>",
        showlegend=False,
        name="click",
    )
    return Prebuilt({**spec, "data": [*spec["data"], points]})
