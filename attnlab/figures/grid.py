"""Several matrices of one kind in one chart (one per head), in as many rows as the chart's width needs.

A grid is laid out in pixels for the width this session's charts have (`figures.screen`): as many panels share a row
as keep each cell at least `ASPECT` times as wide as it is tall (four heads of twelve tokens side by side on a desktop,
one per row on a phone), each panel's title is wrapped or cut to its panel's width, and the rows are set apart by
the room the row above's column labels and the next row's titles take.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

import attnlab.figures.screen as screen
from attnlab.figures.celltext import legible
from attnlab.figures.margins import bounded
from attnlab.figures.matrix import (
    BASE_LAYOUT,
    _axes,
    _height,
    _margin,
    _row_outline,
    _zrange,
    heatmap_traces,
    matrix_figure,
    slanted,
)
from attnlab.figures.prebuilt import Prebuilt
from attnlab.figures.text import label, unique_labels

ASPECT = 0.45  # a cell is never narrower than about half its height
MAX_PER_ROW = 4  # panels side by side at most, however wide the chart
GAP_X = 0.05  # of the plot's width between two panels of a row
TITLE_PX = 14  # the panels' titles
TITLE_MAX_LINES = 3  # "the other / pairing, / positions 0–7" in a phone's panel, rather than cut
GAP_MIN_CELL_PX = 7  # cells narrower than this touch (`matrix.GAP_ACROSS` said it in columns across a 940-px page)
TOP_PX = 40  # above the first row of panels: room for a one-line title


def per_row(n: int, n_cols: int, plot_px: float, cell_px: float) -> int:
    """How many of `n` panels of `n_cols` columns share a row of `plot_px` with cells at least `ASPECT` x `cell_px`
    wide (one, when even one panel's cells are narrower), the rows as even as the fewest rows allow."""
    for p in range(min(n, MAX_PER_ROW), 1, -1):
        if plot_px * (1 - GAP_X * (p - 1)) / p / n_cols >= ASPECT * cell_px:
            return -(-n // -(-n // p))  # as few rows, evened out: four panels go two and two, not three and one
    return 1


def _title_block(titles: Sequence[str], panel_px: float) -> tuple[list[str], int]:
    """The titles fitted to a panel's width, and the pixels their tallest takes above a row of panels."""
    fitted = [screen.fit(label(title, 40), panel_px, TITLE_PX, TITLE_MAX_LINES) for title in titles]
    return fitted, screen.line_px(TITLE_PX, max(map(screen.lines, fitted), default=0)) + 6


def _panels(n: int, n_rows: int, n_cols: int, margin: dict) -> tuple[int, float, float]:
    """Panels per row, and each panel's width and height (px), for `n` panels of n_rows x n_cols in `margin`."""
    plot_px = max(1, screen.width() - margin["l"] - margin["r"])
    panel_h = _height(n_rows) - TOP_PX - margin["b"]  # a panel's rows, as one row of panels has always had them
    p = per_row(n, n_cols, plot_px, panel_h / n_rows)
    panel_w = plot_px * (1 - GAP_X * (p - 1)) / p
    return p, panel_w, min(panel_h, math.ceil(panel_w / n_cols / ASPECT * n_rows))  # a panel still too narrow: shorter


def grid_figure(
    mats: Sequence[np.ndarray],
    titles: Sequence[str],
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    hover_extra: Sequence[Sequence[Sequence[str]] | None] | None = None,
    highlight_row: int | None = None,
    **kw,
) -> go.Figure:
    """Several same-kind matrices (e.g. one per head) sharing one colour scale, in rows of `per_row` panels."""
    n, n_rows, n_cols = len(mats), len(rows), len(cols)
    shared = _zrange(np.concatenate([np.asarray(m, dtype=float).ravel() for m in mats]), kw.get("kind", "signed"))
    labels_y, labels_x = unique_labels(rows), unique_labels(cols)  # the labels as heatmap_traces writes them
    measure = not bounded([*labels_y, *labels_x])
    scale = dict(showscale=True, y=labels_y, x=labels_x, **shared)  # what `_margin` reads of the first panel
    values = np.concatenate([np.ravel(m) for m in mats])
    base = dict(BASE_LAYOUT["margin"], t=TOP_PX)
    margin = _margin(base, [scale], values, slant=False)
    p, panel_w, panel_h = _panels(n, n_rows, n_cols, margin)
    slant = slanted(labels_x, panel_w / n_cols)
    if slant:  # the slanted labels' room, and the panels laid out again in what is left (their labels still slant)
        margin = _margin(base, [scale], values, slant=True)
        p, panel_w, panel_h = _panels(n, n_rows, n_cols, margin)
    fitted, title_px = _title_block(titles, panel_w)
    grid_rows = -(-n // p)
    gap_px = margin["b"] + title_px  # the row above's column labels, then this row's titles
    plot_h = grid_rows * panel_h + (grid_rows - 1) * gap_px
    margin["t"] = max(TOP_PX, title_px + 4)
    layout = dict(BASE_LAYOUT, height=plot_h + margin["t"] + margin["b"], annotations=[], shapes=[], margin=margin)
    width, height = (1 - GAP_X * (p - 1)) / p, panel_h / plot_h
    data = []
    for i, m in enumerate(mats):
        r, c = divmod(i, p)
        x0, y1 = c * (width + GAP_X), 1 - r * (panel_h + gap_px) / plot_h
        suffix = "" if i == 0 else str(i + 1)
        layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"] = _axes(
            slant, measure, [x0, x0 + width], [max(0.0, y1 - height), y1], suffix
        )
        layout[f"yaxis{suffix}"]["showticklabels"] = c == 0  # the panels of a row share their row labels
        extra = hover_extra[i] if hover_extra else None
        traces = heatmap_traces(m, rows, cols, hover_extra=extra, showscale=i == 0, across=p * n_cols, **kw)
        traces[0].update(shared)  # traces[0] is the values; any other is the blocked layer
        if panel_w / n_cols < GAP_MIN_CELL_PX:  # cells that narrow touch: Plotly draws gapped cells one by one
            traces = [dict(trace, xgap=0, ygap=0) for trace in traces]
        traces = legible(traces, mats, panel_w, panel_h)  # every panel with numbers, or none
        data += [dict(trace, xaxis=f"x{suffix}", yaxis=f"y{suffix}") for trace in traces]
        layout["shapes"] += _row_outline(highlight_row, n_rows, n_cols, suffix)
        layout["annotations"].append(
            dict(
                text=fitted[i],
                x=x0 + width / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=TITLE_PX),
            )
        )
    return Prebuilt(dict(data=data, layout=layout))


def matrices_figure(
    mats: Sequence[np.ndarray],
    titles: Sequence[str],
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    hover_extra: Sequence[Sequence[Sequence[str]] | None] | None = None,
    **kw,
) -> go.Figure:
    """One matrix on its own, or several (one per head) in a grid: what every per-head stage draws."""
    if len(mats) == 1:
        return matrix_figure(mats[0], rows, cols, hover_extra=hover_extra[0] if hover_extra else None, **kw)
    return grid_figure(mats, titles, rows, cols, hover_extra=hover_extra, **kw)
