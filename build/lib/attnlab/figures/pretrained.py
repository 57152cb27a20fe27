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
from attnlab.figures.text import esc, label

THUMB = 64  # pixels per attention map in the overview: longer texts are max-pooled down to it
GAP = 6  # pixels between maps
LINE_BUCKETS = 8  # line strengths drawn as this many traces (one per opacity band)
MIN_LINE_WEIGHT = 0.02  # weaker lines are left out of the head view: they would only grey the picture


def lookup_table(scale, n: int = 256) -> np.ndarray:
    """(n, 3) uint8 colours of a Plotly colour scale sampled evenly from 0 to 1."""
    colours = sample_colorscale(list(map(list, expanded_scale(scale))), np.linspace(0, 1, n).tolist())
    return np.array([unlabel_rgb(c) for c in colours], dtype=np.float64).round().astype(np.uint8)


def thumb_sides(t_q: int, t_k: int) -> tuple[int, int]:
    """Pixels per map (rows, columns): repeated up to about THUMB for short texts, pooled to THUMB for long ones."""
    t = max(t_q, t_k)
    if t <= THUMB:
        return t_q * (THUMB // t), t_k * (THUMB // t)
    return max(1, round(THUMB * t_q / t)), max(1, round(THUMB * t_k / t))


def pooled_axis(maps: np.ndarray, side: int, axis: int) -> np.ndarray:
    """One axis of T cells -> side pixels: repeated when side >= T, else each pixel the largest weight of its block."""
    t = maps.shape[axis]
    if side >= t:
        return maps.repeat(side // t, axis=axis)
    starts = np.linspace(0, t, side + 1).astype(int)[:-1]
    return np.maximum.reduceat(maps, starts, axis=axis)


def pooled(maps: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(..., T_q, T_k) -> (..., rows, cols), so a sharp peak stays visible at any length."""
    return pooled_axis(pooled_axis(maps, rows, -2), cols, -1)


def thumbnail_levels(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T_q, T_k) weights in [0, 1] -> (L, H, rows, cols) uint8 levels: numbers only, in no palette."""
    rows, cols = thumb_sides(*attentions.shape[-2:])
    return np.clip((pooled(attentions, rows, cols) * 255).round(), 0, 255).astype(np.uint8)


def thumbnails(levels: np.ndarray) -> np.ndarray:
    """(L, H, rows, cols) levels -> one RGB picture in the current palette, the maps in a layers x heads grid."""
    n_layers, n_heads, rows, cols = levels.shape
    table = lookup_table(current().prob)
    picture = np.full((n_layers * (rows + GAP) - GAP, n_heads * (cols + GAP) - GAP, 3), 255, dtype=np.uint8)
    for layer in range(n_layers):
        for head in range(n_heads):
            top, left = layer * (rows + GAP), head * (cols + GAP)
            picture[top : top + rows, left : left + cols] = table[levels[layer, head]]  # (rows, cols, 3)
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
    """Every head of every layer as a small map (L, H, T_q, T_k); each carries a clickable marker naming its head.

    `levels` (from `thumbnail_levels(attentions)`) may be passed when a cache already holds them.
    """
    levels = thumbnail_levels(attentions) if levels is None else levels  # (L, H, rows, cols)
    n_layers, n_heads, rows, cols = levels.shape
    picture = thumbnails(levels)
    step_y, step_x = rows + GAP, cols + GAP
    centres_x = [h * step_x + cols / 2 for h in range(n_heads)]
    centres_y = [layer * step_y + rows / 2 for layer in range(n_layers)]
    xs, ys, names, custom = [], [], [], []
    for layer in range(n_layers):
        for head in range(n_heads):
            xs.append(centres_x[head])
            ys.append(centres_y[layer])
            names.append(f"{esc(layer_name)} {layer + 1} · {esc(head_name)} {head + 1}")
            custom.append([layer, head])
    marker = dict(size=max(20, min(rows, cols) * 0.55), color=TRANSPARENT, symbol="square")
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
        height=int(110 + 75 * n_layers * max(0.5, rows / max(rows, cols))),
        xaxis=numbered_axis(centres_x, esc(head_name), side="top", range=[-GAP, picture.shape[1] + GAP]),
        yaxis=numbered_axis(centres_y, esc(layer_name), autorange="reversed", scaleanchor="x"),
        dragmode="zoom",
    )
    if picked is not None:
        layer, head = picked
        layout["shapes"] = [
            dict(
                type="rect",
                x0=head * step_x - 3,
                x1=head * step_x + cols + 3,
                y0=layer * step_y - 3,
                y1=layer * step_y + rows + 3,
                line=dict(color=current().highlight, width=3),
            )
        ]
    return Prebuilt(dict(data=data, layout=layout))


def line_traces(weights: np.ndarray, pairs: np.ndarray, colour: str) -> list[dict]:
    """One lines trace per strength band: each (i, j) of `pairs` a line from query i (x=0) to key j (x=1)."""
    data = []
    edges = np.linspace(MIN_LINE_WEIGHT, 1.0, LINE_BUCKETS + 1)
    strengths = weights[pairs[:, 0], pairs[:, 1]] if len(pairs) else np.zeros(0)
    for b in range(LINE_BUCKETS):
        inside = (strengths >= edges[b]) & (strengths < edges[b + 1] + (b == LINE_BUCKETS - 1))
        if not inside.any():
            continue
        xs, ys = [], []
        for i, j in pairs[inside].tolist():
            xs += [0, 1, None]
            ys += [i, j, None]
        data.append(
            dict(
                type="scatter",
                x=xs,
                y=ys,
                mode="lines",
                hoverinfo="skip",
                showlegend=False,
                line=dict(color=colour, width=1 + 4 * edges[b + 1]),
                opacity=float(0.15 + 0.85 * (edges[b] + edges[b + 1]) / 2),
            )
        )
    return data


def token_column(tokens: Sequence[str], x: int, anchor: str, bold: int | None, title: str | None) -> dict:
    """One side's tokens as text marks, the followed one in bold."""
    labels = [label(tok, 24) for tok in tokens]
    text = [f"<b>{lab}</b>" if i == bold else lab for i, lab in enumerate(labels)]
    return dict(
        type="scatter",
        x=[x] * len(tokens),
        y=list(range(len(tokens))),
        mode="text",
        text=text,
        name=esc(title or ""),
        showlegend=False,
        textposition=f"middle {anchor}",
        hoverinfo="skip",
        textfont=dict(size=14),
    )


def head_lines_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    query: int | None,
    title: str,
    tokens_k: Sequence[str] | None = None,
    key: int | None = None,
    sides: tuple[str, str] | None = None,
) -> Prebuilt:
    """bertviz's head view: queries on the left, keys on the right, one line per pair with opacity = weight.

    weights is (T_q, T_k); tokens_k names the keys (the queries' tokens by default: self-attention). Follow a
    query (its row: where it looks) or a key (its column: who looks at it); neither draws every line.
    `sides` are the two column headings (for cross attention: target and source).
    """
    keys = list(tokens if tokens_k is None else tokens_k)
    t_q, t_k = weights.shape
    rows = np.arange(t_q) if query is None else np.array([query])
    cols = np.arange(t_k) if key is None else np.array([key])
    pairs = np.stack(np.meshgrid(rows, cols, indexing="ij"), axis=-1).reshape(-1, 2)  # (P, 2) of (i, j)
    data = line_traces(weights, pairs, current().line(0))
    data.append(token_column(tokens, 0, "right", query, sides[0] if sides else None))
    data.append(token_column(keys, 1, "left", key, sides[1] if sides else None))
    t = max(t_q, t_k)
    layout = dict(
        BASE_LAYOUT,
        title=dict(text=label(title, 80), x=0.0),
        height=int(min(2400, max(260, 60 + 22 * t))),
        xaxis=dict(visible=False, range=[-0.9, 1.9]),
        yaxis=dict(visible=False, autorange="reversed", range=[t - 0.5, -0.5]),
    )
    if sides:
        layout["annotations"] = [
            dict(
                x=x,
                y=1,
                yref="paper",
                text=f"<b>{label(side, 30)}</b>",
                showarrow=False,
                xanchor=anchor,
                yanchor="bottom",
            )
            for x, side, anchor in ((0, sides[0], "right"), (1, sides[1], "left"))
        ]
    return Prebuilt(dict(data=data, layout=layout))
