"""Which head owns which of W's columns: a strip coloured by head, alone or over the matrix it labels.

No Streamlit here. The app draws W_Q under its strip (`with_head_strip`, one chart); `head_columns_figure` is the
strip alone, a full Plotly figure for notebook users.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

import attnlab.figures.screen as screen
from attnlab.figures.celltext import MIN_TEXT_PX, spacing
from attnlab.figures.margins import em_width
from attnlab.figures.matrix import LEVEL_GAP_PX
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import BASE_LAYOUT, TEMPLATE, Prebuilt, colorscale, typed

STRIP_PX, STRIP_GAP_PX = 34, 4  # `with_head_strip`: the strip's height with the gap under it, and that gap


def _owners(d_model: int, n_heads: int) -> np.ndarray:
    """Which head owns each of W's columns: (1, d_model), head h's d_k columns side by side."""
    return np.repeat(np.arange(n_heads), d_model // n_heads)[None, :]


def _scale(n_heads: int) -> list[list]:
    """The palette's heads scale, or its first line colour alone for a single head (a scale needs two stops)."""
    one = current().line(0)
    return colorscale(current().heads) if n_heads > 1 else [[0, one], [1, one]]


def head_columns_figure(d_model: int, n_heads: int, head_names: Sequence[str]) -> go.Figure:
    """A strip over W's columns coloured by the head that owns them."""
    d_k = d_model // n_heads
    owner = _owners(d_model, n_heads)
    strip = dict(
        type="heatmap",
        z=owner,
        colorscale=_scale(n_heads),
        showscale=False,
        xgap=1,
        customdata=np.array([[head_names[h] for h in owner[0]]], dtype=object),
        hovertemplate="%{customdata}<extra></extra>",
        text=[[head_names[h] for h in owner[0]]],
        texttemplate="%{text}" if d_k >= 2 else None,
    )
    layout = dict(
        template=TEMPLATE,
        height=90,
        margin=dict(t=10, b=10),
        xaxis=dict(
            tickmode="array",
            tickvals=list(range(d_model)),
            ticktext=[f"d{i}" for i in range(d_model)],
            ticklabeloverflow="allow",  # Plotly's default for a numeric axis measures each label as each is placed
        ),
        yaxis=dict(visible=False),
    )
    return go.Figure(dict(data=[strip], layout=layout))  # validated once, not property by property


def with_head_strip(fig: Prebuilt, n_heads: int, head_names: Sequence[str]) -> Prebuilt:
    """`fig`, a matrix of d_model columns (W_Q), under a strip that colours each column by the head that owns it.

    One chart, the strip on the matrix's own x axis, so each head's colour stands over exactly its columns at any
    width or zoom (drawn as a chart of its own, its margins never quite matched the matrix's), and a page sends one
    chart fewer (issue 61). The strip takes `STRIP_PX` more of the chart's height; the matrix keeps its own. Each
    head is named once, centred over its columns, where its name fits them at `MIN_TEXT_PX` or more (Plotly fits no
    text to a one-row heatmap: per cell, it wrote "Head 1" at 13 px into 28-px columns); elsewhere the hover names it.
    """
    spec = fig.to_dict()
    values, layout = spec["data"][0], spec["layout"]
    margin, n_cols = layout["margin"], len(values["x"])
    d_k = n_cols // n_heads
    owner = _owners(n_cols, n_heads)
    scale = _scale(n_heads)
    strip = dict(
        type="heatmap",
        name="heads",
        z=typed(owner.astype(np.int8 if n_heads < 128 else np.int16)),
        x=values["x"],
        y=[""],
        yaxis="y2",
        colorscale=scale,
        showscale=False,
        xgap=0,  # one band of colour a head, its name across it
        text=[[head_names[h] for h in owner[0]]],
        hovertemplate="%{text}<extra></extra>",
    )
    span_px = d_k * spacing(screen.width() - margin["l"] - margin["r"], n_cols) - LEVEL_GAP_PX  # names kept apart
    font_px = min(math.floor(span_px / max(em_width(name) for name in head_names)), BASE_LAYOUT["font"]["size"])
    plot_h = layout["height"] - margin["t"] - margin["b"]
    low = plot_h / (plot_h + STRIP_PX)  # the matrix's share of the taller plot area
    bar = dict(values["colorbar"], len=0.9 * low, y=low / 2, yanchor="middle")
    out = dict(layout, height=layout["height"] + STRIP_PX)
    out["yaxis"] = dict(layout["yaxis"], domain=[0.0, low])
    out["yaxis2"] = dict(domain=[(plot_h + STRIP_GAP_PX) / (plot_h + STRIP_PX), 1.0], visible=False, automargin=False)
    if font_px >= MIN_TEXT_PX:
        out["annotations"] = [*layout.get("annotations", []), *_names(head_names, d_k, font_px, scale)]
    return Prebuilt(dict(spec, data=[dict(values, colorbar=bar), *spec["data"][1:], strip], layout=out))


def _names(head_names: Sequence[str], d_k: int, font_px: int, scale: list) -> list[dict]:
    """Each head's name over the middle of its d_k columns, in a colour that reads on the head's own."""
    colours = sample_colorscale(scale, [h / max(1, len(head_names) - 1) for h in range(len(head_names))])
    return [
        dict(
            text=name,
            x=h * d_k + (d_k - 1) / 2,  # a category axis places by column index: the middle of the head's columns
            y=0,
            xref="x",
            yref="y2",
            showarrow=False,
            font=dict(size=font_px, color=_on(colour)),
        )
        for h, (name, colour) in enumerate(zip(head_names, colours, strict=True))
    ]


def _on(colour: str) -> str:
    """Text that reads on `colour` ("rgb(r, g, b)"): dark on a light one, white on a dark one, as Plotly picks its
    cell text's colour (tinycolor's brightness, 128 and up is light)."""
    r, g, b = (float(c) for c in colour[colour.index("(") + 1 : -1].split(","))
    return "#444" if (r * 299 + g * 587 + b * 114) / 1000 >= 128 else "#fff"
