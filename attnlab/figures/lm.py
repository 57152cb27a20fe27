"""Plotly builders for the Language model page: the painted text, the next-token bars, the sink curves, the pushes.

The parts that push one logit are bars (the lens and the branches are `attnlab.figures.lm_grids`'s).

The text figure writes each character in a cell coloured by the loss the model took on it (rows of `width`
characters, as a text wraps), with an invisible point over every cell so that a click picks a character
(heatmaps send no click events). Labels and names are escaped here; every sentence comes from the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.lines import line_figure, scatter
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import BASE_LAYOUT, Prebuilt, colorscale
from attnlab.figures.text import esc, label

CELL_PX = 34  # height of one line of the painted text


def loss_text_figure(
    pieces: Sequence[str],
    losses: np.ndarray,
    guesses: Sequence[str],
    width: int,
    picked: int | None,
    loss_word: str,
    guess_word: str,
) -> Prebuilt:
    """Piece i (the text's tokens, <bos> left out) in row i // width, coloured by losses[i]; `picked` outlined."""
    palette = current()
    n, rows = len(pieces), max(1, math.ceil(len(pieces) / width))
    z = np.full((rows, width), np.nan)
    text = np.full((rows, width), "", dtype=object)
    hover = []
    for i, (piece, loss, guess) in enumerate(zip(pieces, losses, guesses, strict=True)):
        r, c = divmod(i, width)
        z[r, c], text[r, c] = float(loss), label(piece, 4)
        hover.append(f"<b>{label(piece, 4)}</b> · {esc(loss_word)} {loss:.2f} · {esc(guess_word)} {label(guess, 8)}")
    top = float(np.nanmax(z)) if n else 1.0
    cells = dict(
        type="heatmap",
        z=z.tolist(),
        text=text.tolist(),
        texttemplate="%{text}",
        textfont=dict(size=15),
        colorscale=colorscale(palette.positive),
        zmin=0.0,
        zmax=max(top, 1.0),
        xgap=2,
        ygap=2,
        hoverinfo="skip",  # the points on top say it, and take the click
        colorbar=dict(thickness=10, len=0.9, title=dict(text=esc(loss_word), side="right")),
    )
    points = dict(
        type="scatter",
        mode="markers",
        x=[i % width for i in range(n)],
        y=[i // width for i in range(n)],
        customdata=list(range(n)),
        text=hover,
        marker=dict(size=22, opacity=0, symbol="square"),
        hovertemplate="%{text}<extra></extra>",
        showlegend=False,
        name="click",
    )
    axis = dict(visible=False, showgrid=False, zeroline=False, fixedrange=True)
    layout = dict(
        BASE_LAYOUT,
        xaxis=dict(axis, range=[-0.5, width - 0.5]),
        yaxis=dict(axis, range=[rows - 0.5, -0.5]),
        height=40 + CELL_PX * rows,
        margin=dict(l=4, r=4, t=8, b=8),
        dragmode=False,
    )
    if picked is not None and 0 <= picked < n:
        r, c = divmod(picked, width)
        outline = dict(color=palette.highlight, width=3)
        layout["shapes"] = [dict(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5, line=outline)]
    return Prebuilt(dict(data=[cells, points], layout=layout))


def top_figure(
    tokens: Sequence[str], probs: Sequence[float], tempered: Sequence[float] | None, names: tuple[str, str], title: str
) -> go.Figure:
    """The k likeliest next tokens as bars (likeliest on top): the model's probabilities, and at a temperature."""
    palette = current()
    y = [label(tok, 8) + "\u200b" * i for i, tok in enumerate(tokens)]  # repeated labels stay separate bars
    data = [
        dict(type="bar", orientation="h", x=list(probs), y=y, name=esc(names[0]), marker=dict(color=palette.line(0)))
    ]
    if tempered is not None:
        data.append(
            dict(
                type="bar",
                orientation="h",
                x=list(tempered),
                y=y,
                name=esc(names[1]),
                marker=dict(color=palette.line(1)),
            )
        )
    for trace in data:
        trace["hovertemplate"] = "%{y}: %{x:.3f}<extra>%{fullData.name}</extra>"
    axes = dict(
        xaxis=dict(range=[0, 1], gridcolor=palette.grid, tickformat=".0%"),
        yaxis=dict(autorange="reversed", type="category"),
        barmode="group",
    )
    return line_figure(data, axes, title, 140 + 26 * len(tokens) * (2 if tempered is not None else 1))


def stream_figure(
    series: Sequence[tuple[str, np.ndarray]],
    marks: Sequence[tuple[int, str]],
    title: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """Curves of a loss along a text, one per cache rule, and a dotted vertical line at each named position (named in
    the legend, so no label sits on the plot where a phone's narrow chart would make two collide)."""
    palette = current()
    data = [
        scatter(
            list(range(1, len(values) + 1)),
            [float(v) for v in values],
            name,
            mode="lines",
            line=dict(color=palette.line(i), width=2),
        )
        for i, (name, values) in enumerate(series)
    ]
    top = max((float(np.max(values)) for _, values in series), default=1.0)
    for i, (x, text) in enumerate(marks):
        dash = ("dot", "dash")[i % 2]
        data.append(
            scatter([x, x], [0.0, top], text, mode="lines", line=dict(color=palette.neutral, width=1, dash=dash))
        )
    axes = dict(
        xaxis=dict(title=dict(text=esc(x_title)), gridcolor=palette.grid),
        yaxis=dict(title=dict(text=esc(y_title)), gridcolor=palette.grid, rangemode="tozero"),
    )
    return line_figure(data, axes, title, 360)


def parts_figure(
    labels: Sequence[str],
    values: Sequence[float],
    kinds: Sequence[int],
    hover: Sequence[str],
    picks: Sequence[object],
    kind_names: Sequence[str],
    title: str,
    axis_title: str,
    share: float = 1.0,
) -> go.Figure:
    """Each part's push on one logit as a bar (the model's order, top down), one colour per kind (kinds[i] indexes
    `kind_names`: embedding, heads, MLPs, the rest), a rule at 0; `picks` is a bar's click data (a head's [layer,
    head], None for the others); `share` of the page's width is the chart's (its title is fitted to it)."""
    palette = current()
    y = [label(name, 28) for name in labels]
    data = []
    for kind, name in enumerate(kind_names):
        mine = [i for i, k in enumerate(kinds) if k == kind]
        if not mine:
            continue
        data.append(
            dict(
                type="bar",
                orientation="h",
                x=[float(values[i]) for i in mine],
                y=[y[i] for i in mine],
                hovertext=[esc(hover[i]) for i in mine],
                customdata=[picks[i] for i in mine],
                name=esc(name),
                marker=dict(color=palette.line(kind)),
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    axes = dict(
        xaxis=dict(title=dict(text=esc(axis_title)), gridcolor=palette.grid, zeroline=True, zerolinecolor=palette.rule),
        yaxis=dict(autorange="reversed", type="category", categoryorder="array", categoryarray=y),
        barmode="overlay",
    )
    return line_figure(data, axes, title, 120 + 22 * len(labels), share=share)
