"""Matrices as token-labelled heatmaps: one matrix with rules, outlines and hover (a grid of them: `figures.grid`).

No Streamlit here: figures are plain `go.Figure`s that tests can inspect. User text reaches
Plotly only through `figures.text`, which escapes it; colours come from the current palette.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import plotly.graph_objects as go

import attnlab.figures.screen as screen
from attnlab.figures.celltext import BLOCKED_LABEL, legible
from attnlab.figures.margins import COLORBAR_THICKNESS, COLORBAR_X, bounded, heatmap_margin, widest
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import BASE_LAYOUT, Prebuilt, colorscale, expanded_scale, typed
from attnlab.figures.projector import projector
from attnlab.figures.text import label, unique_labels

__all__ = [  # the builders, and what other modules have imported from here
    "BASE_LAYOUT",
    "Prebuilt",
    "dot_product_hover",
    "expanded_scale",
    "heatmap_traces",
    "matrix_figure",
    "projector",
    "vector",
]

Kind = Literal["signed", "prob", "positive"]
TITLE_PX, TITLE_SIDE_PX = 18, 20  # a chart title's font at its largest, and what of the chart's width it may not use
TEXT_CELLS = 160  # write each cell's value on the chart when the matrix is at most this big (`celltext.legible`
# keeps it where it can be read)
LEVEL_GAP_PX = 4  # column labels written level need at least this between two of them, or they read as one
TICK_PX = 16  # Plotly writes a category axis's labels at least this far apart (1.2 x the 13-px font, rounded): where
# columns are narrower, it labels only every few
BIG_CELLS = 1024  # above this many cells a chart sends float32 instead of float64
GAP_SIDE = 64  # up to this many rows and columns cells are drawn apart; beyond, a gap is under a pixel wide and
# Plotly draws gapped cells one by one (2.4x slower for a 128 x 1536 matrix in Chromium)
GAP_ACROSS = 128  # ... and up to this many columns across a chart's panels side by side (cells of 7 px or more on
# the page's 940 px): four 64 x 64 heads are 256 columns of 3-px cells, a third of each one a gap, painted 2.8x slower
BLOCKED_LABEL_ACROSS = 48  # blocked cells say "−∞" up to this many columns across a chart; past it the label
# shrinks under 9 px (7 px for four 16-token heads, 6 px for one 64-token head, at the page's 940 px) and the grey and
# the hover say it alone: Plotly formats a label for every cell of the layer, drawn or not, and lays out one text
# node per blocked cell (2,016 for one causal 64 x 64 head: its draw took 5.9x as long, four such heads in one chart
# 2.7x, in Chromium on the busy machine)


def _zrange(m: np.ndarray, kind: Kind) -> dict:
    """Colour range: 0..1 for probabilities, symmetric around 0 for signed values."""
    finite = m[np.isfinite(m)]
    if kind == "prob":
        return dict(zmin=0.0, zmax=1.0)
    if kind == "signed":
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        bound = bound or 1.0
        return dict(zmin=-bound, zmax=bound, zmid=0.0)
    return {}


def heatmap_traces(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: Kind = "signed",
    row_name: str = "row",
    col_name: str = "col",
    hover_extra: Sequence[Sequence[str]] | None = None,
    blocked_text: str = "blocked",
    showscale: bool = True,
    text: bool | None = None,
    across: int | None = None,
) -> list[dict]:
    """The heatmap of `m` plus, where `m` is -inf, a grey layer that says the cell is blocked.

    `across` is how many columns the whole chart shows side by side (every panel of a grid; `m`'s own by
    default): past `GAP_ACROSS` cells touch, past `BLOCKED_LABEL_ACROSS` blocked cells carry no "−∞".
    Traces are plain dicts: building Plotly objects property by property costs more than
    the rest of a Playground rerun.
    """
    palette = current()
    m = np.asarray(m, dtype=np.float64)
    blocked = np.isneginf(m)
    z = np.where(blocked, np.nan, m)
    z = z if z.size <= BIG_CELLS else z.astype(np.float32)  # halves the bytes of big charts
    across = m.shape[-1] if across is None else across
    gap = 1 if max(m.shape) <= GAP_SIDE and across <= GAP_ACROSS else 0
    label = across <= BLOCKED_LABEL_ACROSS
    text = m.size <= TEXT_CELLS if text is None else text
    x, y = unique_labels(cols), unique_labels(rows)
    where = f"{row_name}: <b>%{{y}}</b><br>{col_name}: <b>%{{x}}</b><br>"
    value = "%{z:.3f}" if kind == "prob" else "%{z:.4g}"
    extra = {} if hover_extra is None else {"customdata": [list(row) for row in hover_extra]}
    traces = [
        dict(
            type="heatmap",
            z=typed(z),
            x=x,
            y=y,
            colorscale=colorscale(getattr(palette, kind)),
            showscale=showscale,
            texttemplate="%{z:.2f}" if text else None,
            xgap=gap,
            ygap=gap,
            hovertemplate=where + value + ("%{customdata}" if extra else "") + "<extra></extra>",
            # its labels fit the margin written for them: Plotly's default ("hide past div") measures every label
            # again as each one is placed, a forced layout each
            colorbar=dict(thickness=COLORBAR_THICKNESS, len=0.9, x=COLORBAR_X, ticklabeloverflow="allow"),
            **extra,
            **_zrange(m, kind),
        )
    ]
    if blocked.any():
        traces.append(
            dict(
                type="heatmap",
                z=typed(np.where(blocked, 1.0, np.nan).astype(z.dtype)),
                x=x,
                y=y,
                showscale=False,
                colorscale=[[0.0, palette.blocked], [1.0, palette.blocked]],
                name="blocked",
                **(dict(text=np.where(blocked, BLOCKED_LABEL, "").tolist(), texttemplate="%{text}") if label else {}),
                xgap=gap,
                ygap=gap,
                textfont=dict(color=palette.blocked_text),
                hovertemplate=where + f"−∞ ({blocked_text})<extra></extra>",
            )
        )
    return traces


def _axes(slanted: bool, measure: bool, x_domain=None, y_domain=None, anchor: str = "") -> tuple[dict, dict]:
    """Category axes in token order, row 0 on top, the column labels `slanted` at -45 degrees or level.

    `measure`: Plotly measures the labels in the browser (automargin), for labels whose widths `figures.margins`
    does not bound (`margins.bounded`); the margins written already hold the others.
    """
    x = dict(showgrid=False, zeroline=False, tickangle=-45 if slanted else 0, type="category")
    y = dict(autorange="reversed", showgrid=False, zeroline=False, type="category")
    x["automargin"] = y["automargin"] = measure
    if x_domain is not None:
        x.update(domain=x_domain, anchor=f"y{anchor}")
        y.update(domain=y_domain, anchor=f"x{anchor}")
    return x, y


def slanted(labels: Sequence[str], column_px: float) -> bool:
    """Whether column labels must slant: the widest of them, written level, would not fit the room between two
    labelled columns with `LEVEL_GAP_PX` to spare (two phone panels of six tokens' "the", "cat", "sat" ran together
    as "thecatsat").

    `column_px` comes from margins that are upper bounds, so Plotly's columns are at least that wide, and where they
    are under `TICK_PX` it labels only every few, at least `TICK_PX` apart: that room is the least it gives a label.
    Widths are `margins.widest`'s upper bounds, so a label that might not fit in some browser's font slants; twelve
    tokens on a desktop chart stay level.
    """
    return widest(labels) * BASE_LAYOUT["font"]["size"] + LEVEL_GAP_PX > max(column_px, TICK_PX)


def _margin(base: dict, traces: list[dict], m: np.ndarray, slant: bool) -> dict:
    """`base` widened to the room the labels (`slant`ed or level) and the colour bar of `traces` (the first carries
    the scale) take."""
    scale = traces[0]
    colorbar = None
    if scale["showscale"]:
        finite = m[np.isfinite(m)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        colorbar = (scale.get("zmin", low), scale.get("zmax", high))
    font_px = BASE_LAYOUT["font"]["size"]
    return heatmap_margin(base, font_px, scale["y"], scale["x"], slanted=slant, colorbar=colorbar)


def _height(n_rows: int) -> int:
    """Tall enough for readable rows, short enough to keep the page scannable."""
    return int(min(720, max(200, 60 + 26 * n_rows)))


def _outline(rows: tuple[int, int], cols: tuple[int, int], suffix: str = "") -> dict:
    """A rectangle around cells rows[0]..rows[1]-1 x cols[0]..cols[1]-1 of one panel."""
    return dict(
        type="rect",
        x0=cols[0] - 0.5,
        x1=cols[1] - 0.5,
        y0=rows[0] - 0.5,
        y1=rows[1] - 0.5,
        xref=f"x{suffix}",
        yref=f"y{suffix}",
        line=dict(color=current().highlight, width=3),
        fillcolor="rgba(0,0,0,0)",
    )


def _row_outline(row: int | None, n_rows: int, n_cols: int, suffix: str = "") -> list[dict]:
    """The picked row outlined (none when `row` is None or out of range)."""
    if row is None or not 0 <= row < n_rows:
        return []
    return [_outline((row, row + 1), (0, n_cols), suffix)]


def _rules(
    col_breaks: Sequence[int], row_breaks: Sequence[int], n_rows: int, n_cols: int, dash: str, suffix: str = ""
) -> list[dict]:
    """Lines before the `col_breaks` columns and above the `row_breaks` rows: where a head or block starts. None where
    every column (row) starts one, as at d_k = 1: rules round every cell say nothing the cells don't, and at 64 heads
    they were 63 lines over each of the Multi-head page's W_Q and Q."""
    col_breaks = () if list(col_breaks) == list(range(1, n_cols)) else col_breaks
    row_breaks = () if list(row_breaks) == list(range(1, n_rows)) else row_breaks
    line = dict(color=current().rule, width=2, dash=dash)
    where = dict(type="line", xref=f"x{suffix}", yref=f"y{suffix}", line=line)
    return [dict(where, x0=c - 0.5, x1=c - 0.5, y0=-0.5, y1=n_rows - 0.5) for c in col_breaks] + [
        dict(where, x0=-0.5, x1=n_cols - 0.5, y0=r - 0.5, y1=r - 0.5) for r in row_breaks
    ]


def matrix_figure(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str | None = None,
    col_breaks: Sequence[int] = (),
    row_breaks: Sequence[int] = (),
    breaks_dash: str = "solid",
    highlight_row: int | None = None,
    outline: tuple[tuple[int, int], tuple[int, int]] | None = None,
    **kw,
) -> go.Figure:
    """One matrix as a heatmap with token labels on both axes.

    Rules stand before the `col_breaks` columns and above the `row_breaks` rows (heads, blocks);
    `highlight_row` outlines one row (the query the user picked) so it can be followed from stage
    to stage, and `outline` one block of cells (the current tile).
    """
    n_rows, n_cols = len(rows), len(cols)
    data = heatmap_traces(m, rows, cols, **kw)
    layout = dict(BASE_LAYOUT, height=_height(n_rows))
    text = screen.fit(label(title, 80), screen.width() - TITLE_SIDE_PX, TITLE_PX) if title else None
    layout["title"] = dict(text=text, x=0.0)
    layout["shapes"] = _rules(col_breaks, row_breaks, n_rows, n_cols, breaks_dash) + _row_outline(
        highlight_row, n_rows, n_cols
    )
    if outline is not None:
        layout["shapes"].append(_outline(*outline))
    margin = dict(
        layout["margin"], t=max(layout["margin"]["t"], 2 * (screen.line_px(TITLE_PX, screen.lines(text) - 1) + 12))
    )
    values = np.asarray(m, dtype=np.float64)
    level = _margin(margin, data, values, slant=False)
    slant = slanted(data[0]["x"], (screen.width() - level["l"] - level["r"]) / max(1, n_cols))
    layout["margin"] = margin = _margin(margin, data, values, slant=True) if slant else level
    layout["xaxis"], layout["yaxis"] = _axes(slant, not bounded([*data[0]["y"], *data[0]["x"]]))
    plot_w, plot_h = screen.width() - margin["l"] - margin["r"], layout["height"] - margin["t"] - margin["b"]
    data = legible(data, [m], plot_w, plot_h)
    return Prebuilt(dict(data=data, layout=layout))


def dot_product_terms(q_row: np.ndarray, k_row: np.ndarray, max_terms: int = 8) -> str:
    """How one score was made: `0.12×0.50 + -0.30×0.10 + …`, the sum of products q[d]·k[d]."""
    terms = [f"{a:.2f}×{b:.2f}" for a, b in zip(q_row[:max_terms], k_row[:max_terms], strict=True)]
    more = " + …" if len(q_row) > max_terms else ""
    return " + ".join(terms) + more


def dot_product_hover(q: np.ndarray, k: np.ndarray, prefix: str) -> list[list[str]]:
    """Hover text for a (T_q, T_k) score matrix: the dot product behind each cell."""
    return [[f"<br>{prefix} {dot_product_terms(q[i], k[j])}" for j in range(len(k))] for i in range(len(q))]


def vector(values: np.ndarray) -> np.ndarray:
    """A 1-D vector as a one-row matrix, for matrix_figure."""
    return np.asarray(values, dtype=np.float64).reshape(1, -1)
