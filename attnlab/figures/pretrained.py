"""Figures of the real model: all 72 heads at a glance, one head as token-to-token lines, and layer x head score grids.

The overview draws the 6 x 12 attention maps as one picture (a PNG inside the figure) with a transparent
marker over each map, so the page stays light at 128 tokens (72 heatmaps of 128 x 128 would be a million
cells) and a click on a map can still pick its head.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
from PIL import Image
from plotly.colors import sample_colorscale, unlabel_rgb

from attnlab.figures.palette import TRANSPARENT, current
from attnlab.figures.prebuilt import BASE_LAYOUT, Prebuilt, expanded_scale
from attnlab.figures.text import label

THUMB = 64  # pixels per attention map in the overview: longer texts are max-pooled down to it
GAP = 6  # pixels between maps
LINE_BUCKETS = 8  # line strengths drawn as this many traces (one per opacity band)
MIN_LINE_WEIGHT = 0.02  # weaker lines are left out of the head view: they would only grey the picture


def lookup_table(scale, n: int = 256) -> np.ndarray:
    """(n, 3) uint8 colours of a Plotly colour scale sampled evenly from 0 to 1."""
    colours = sample_colorscale(list(map(list, expanded_scale(scale))), np.linspace(0, 1, n).tolist())
    return np.array([unlabel_rgb(c) for c in colours], dtype=np.float64).round().astype(np.uint8)


def thumb_side(t: int) -> int:
    """Pixels per map: T repeated up to about THUMB for short texts, THUMB for long ones."""
    return t * max(1, THUMB // t) if t <= THUMB else THUMB


def pooled(maps: np.ndarray, side: int) -> np.ndarray:
    """(..., T, T) -> (..., side, side): each pixel the largest weight of its block (a sharp peak stays visible)."""
    t = maps.shape[-1]
    if side >= t:
        repeat = side // t
        return maps.repeat(repeat, axis=-2).repeat(repeat, axis=-1)
    starts = np.linspace(0, t, side + 1).astype(int)[:-1]
    return np.maximum.reduceat(np.maximum.reduceat(maps, starts, axis=-2), starts, axis=-1)


def thumbnail_levels(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T, T) weights in [0, 1] -> (L, H, side, side) uint8 levels: numbers only, the same for every palette."""
    side = thumb_side(attentions.shape[-1])
    return np.clip((pooled(attentions, side) * 255).round(), 0, 255).astype(np.uint8)


def thumbnails(levels: np.ndarray) -> np.ndarray:
    """(L, H, side, side) levels -> one RGB picture in the current palette, the maps in a layers x heads grid."""
    n_layers, n_heads, side, _ = levels.shape
    table = lookup_table(current().prob)
    picture = np.full((n_layers * (side + GAP) - GAP, n_heads * (side + GAP) - GAP, 3), 255, dtype=np.uint8)
    for layer in range(n_layers):
        for head in range(n_heads):
            tile = table[levels[layer, head]]  # (side, side, 3)
            top, left = layer * (side + GAP), head * (side + GAP)
            picture[top : top + side, left : left + side] = tile
    return picture


def png_uri(picture: np.ndarray) -> str:
    """An RGB array as a data: URI (what a Plotly image trace takes as its source)."""
    buffer = io.BytesIO()
    Image.fromarray(picture).save(buffer, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def numbered_axis(centres: list[float], title: str, **extra) -> dict:
    """An axis of the model view's picture: one tick, counted from 1, at the centre of each layer or head."""
    ticks = [str(i + 1) for i in range(len(centres))]
    return dict(showgrid=False, zeroline=False, tickvals=centres, ticktext=ticks, title=title, **extra)


def model_view_figure(
    attentions: np.ndarray,
    layer_name: str,
    head_name: str,
    picked: tuple[int, int] | None = None,
    levels: np.ndarray | None = None,
) -> Prebuilt:
    """Every head of every layer as a small map; each map carries a clickable marker naming its layer and head.

    `levels` (from `thumbnail_levels(attentions)`) may be passed when a cache already holds them.
    """
    levels = thumbnail_levels(attentions) if levels is None else levels  # (L, H, side, side)
    n_layers, n_heads, side, _ = levels.shape
    picture = thumbnails(levels)
    step = side + GAP
    centres_x = [h * step + side / 2 for h in range(n_heads)]
    centres_y = [layer * step + side / 2 for layer in range(n_layers)]
    xs, ys, names, custom = [], [], [], []
    for layer in range(n_layers):
        for head in range(n_heads):
            xs.append(centres_x[head])
            ys.append(centres_y[layer])
            names.append(f"{layer_name} {layer + 1} · {head_name} {head + 1}")
            custom.append([layer, head])
    marker = dict(size=max(20, side * 0.55), color=TRANSPARENT, symbol="square")
    data = [
        dict(type="image", source=png_uri(picture), x0=0, y0=0, dx=1, dy=1, hoverinfo="skip"),
        dict(
            type="scatter",
            x=xs,
            y=ys,
            mode="markers",
            marker=marker,
            text=names,
            customdata=custom,
            hovertemplate="%{text}<extra></extra>",
            showlegend=False,
        ),
    ]
    layout = dict(
        BASE_LAYOUT,
        height=int(110 + 75 * n_layers),
        xaxis=numbered_axis(centres_x, head_name, side="top", range=[-GAP, picture.shape[1] + GAP]),
        yaxis=numbered_axis(centres_y, layer_name, autorange="reversed", scaleanchor="x"),
        dragmode="zoom",
    )
    if picked is not None:
        layer, head = picked
        layout["shapes"] = [
            dict(
                type="rect",
                x0=head * step - 3,
                x1=head * step + side + 3,
                y0=layer * step - 3,
                y1=layer * step + side + 3,
                line=dict(color=current().highlight, width=3),
            )
        ]
    return Prebuilt(dict(data=data, layout=layout))


def head_lines_figure(weights: np.ndarray, tokens: Sequence[str], query: int | None, title: str) -> Prebuilt:
    """bertviz's head view: queries on the left, keys on the right, one line per pair with opacity = weight."""
    t = len(tokens)
    rows = range(t) if query is None else [query]
    colour = current().line(0)
    data = []
    edges = np.linspace(MIN_LINE_WEIGHT, 1.0, LINE_BUCKETS + 1)
    for b in range(LINE_BUCKETS):
        xs, ys = [], []
        for i in rows:
            for j in np.nonzero((weights[i] >= edges[b]) & (weights[i] < edges[b + 1] + (b == LINE_BUCKETS - 1)))[0]:
                xs += [0, 1, None]
                ys += [i, int(j), None]
        if xs:
            opacity = float(0.15 + 0.85 * (edges[b] + edges[b + 1]) / 2)
            data.append(
                dict(
                    type="scatter",
                    x=xs,
                    y=ys,
                    mode="lines",
                    hoverinfo="skip",
                    showlegend=False,
                    line=dict(color=colour, width=1 + 4 * edges[b + 1]),
                    opacity=opacity,
                )
            )
    labels = [label(tok, 24) for tok in tokens]
    bold = [f"<b>{lab}</b>" if i == query else lab for i, lab in enumerate(labels)]
    for x, anchor in ((0, "right"), (1, "left")):
        data.append(
            dict(
                type="scatter",
                x=[x] * t,
                y=list(range(t)),
                mode="text",
                text=bold,
                showlegend=False,
                textposition=f"middle {anchor}",
                hoverinfo="skip",
                textfont=dict(size=14),
            )
        )
    layout = dict(
        BASE_LAYOUT,
        title=dict(text=label(title, 80), x=0.0),
        height=int(min(2400, max(260, 60 + 22 * t))),
        xaxis=dict(visible=False, range=[-0.9, 1.9]),
        yaxis=dict(visible=False, autorange="reversed", range=[t - 0.5, -0.5]),
    )
    return Prebuilt(dict(data=data, layout=layout))
