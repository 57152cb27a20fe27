"""Character grids for the Language model page: the logit lens (layers x positions) and the branches side by side.

Both wrap as a text does, `width` positions a line, so they read at 390 px: each block of positions is a row of
the text's own characters (or the branch's row names) and, under it, one coloured row per layer (or temperature).
A cell writes a character, its colour is a probability (the palette's `prob` scale), and an invisible point over it
carries the hover and takes the click (heatmaps send no click events); its `customdata` starts with what a click
picks. The hover sentence is sent once per row, as a Plotly hovertemplate whose %{customdata[k]} fields each cell
fills (a sentence per cell made the lens of 128 characters weigh 62 KB). Labels and cell data are escaped here; every
sentence comes from the page, with `{name}` where the row's name goes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from attnlab.figures import screen
from attnlab.figures.margins import em_width
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import BASE_LAYOUT, Prebuilt, colorscale
from attnlab.figures.text import esc, label

CELL_PX = 26  # one row of a grid
MIN_CELL_PX = 22  # the narrowest a cell gets: a CJK character at the cells' font, and room around it
COLORBAR_PX = 60  # the colour bar and its title, beside the grid where the chart is wide enough to have one
LABEL_CHARS = 4  # a cell's character(s), cut


def columns(wanted: int, names: Sequence[str], period: int | None = None) -> int:
    """How many cells a line of the grid holds at this session's chart width: `wanted` at most, at least 4, whole
    periods of a regular poem where one fits (a couplet a line, as the painted text wraps)."""
    px = screen.width() - 12 - 13 * max((em_width(n) for n in names), default=0)
    px -= 0 if screen.phone() else COLORBAR_PX  # a phone's grid has no colour bar
    n = max(4, min(wanted, int(px // MIN_CELL_PX)))
    return period * (n // period) if period and n >= period else n


@dataclass
class Grid:
    """Rows of cells under construction: z (NaN for a plain text row), text, hover and click data per cell."""

    width: int
    z: list[list[float]] = field(default_factory=list)
    text: list[list[str]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    points: list[tuple[int, int, str, list]] = field(default_factory=list)  # (row, col, its hovertemplate, customdata)
    outlines: list[tuple[int, int, int]] = field(default_factory=list)  # (row, col, line width)
    dots: list[tuple[int, int]] = field(default_factory=list)

    def row(self, name: str, z: Sequence[float], text: Sequence[str]) -> int:
        """One row of up to `width` cells; returns its index."""
        pad = self.width - len(z)
        self.z.append([round(float(v), 4) for v in z] + [math.nan] * pad)  # 4 digits: what a colour can show
        self.text.append(list(text) + [""] * pad)
        self.names.append(name)
        return len(self.z) - 1


def figure(grid: Grid, colour_word: str, dot_word: str | None = None) -> Prebuilt:
    """The grid as a heatmap of probabilities with its characters written in, plain text rows, click points."""
    palette = current()
    rows = len(grid.z)
    z = np.array(grid.z)
    coloured = ~np.isnan(z).all(1)  # text rows have no colour: their characters go in a scatter
    cells = dict(
        type="heatmap",
        z=np.where(coloured[:, None], z, np.nan).tolist(),
        text=[t if c else [""] * grid.width for t, c in zip(grid.text, coloured, strict=True)],
        texttemplate="%{text}",
        textfont=dict(size=13),
        colorscale=colorscale(palette.prob),
        zmin=0.0,
        zmax=1.0,
        xgap=1,
        ygap=1,
        hoverinfo="skip",
        colorbar=dict(thickness=10, len=0.6, title=dict(text=esc(colour_word), side="right")),
        showscale=not screen.phone(),  # a phone's grid needs the width; the caption says it
    )
    plain = [(r, c) for r in range(rows) if not coloured[r] for c in range(grid.width) if grid.text[r][c]]
    words = dict(
        type="scatter",
        mode="text",
        x=[c for _, c in plain],
        y=[r for r, _ in plain],
        text=[grid.text[r][c] for r, c in plain],
        textfont=dict(size=14),
        hoverinfo="skip",
        showlegend=False,
    )
    templates = list(dict.fromkeys(h for _, _, h, _ in grid.points))  # one trace per sentence, in row order
    points = [
        dict(
            type="scatter",
            mode="markers",
            x=[c for _, c, h, _ in grid.points if h == template],
            y=[r for r, _, h, _ in grid.points if h == template],
            customdata=[d for _, _, h, d in grid.points if h == template],
            marker=dict(size=18, opacity=0, symbol="square"),
            hovertemplate=template + "<extra></extra>",
            showlegend=False,
            name="click",
        )
        for template in templates
    ]
    data = [cells, words, *points]
    if grid.dots and dot_word:
        data.append(
            dict(
                type="scatter",
                mode="markers",
                x=[c + 0.32 for _, c in grid.dots],
                y=[r - 0.3 for r, _ in grid.dots],
                marker=dict(size=5, color=palette.neutral, symbol="circle"),
                name=esc(dot_word),
                hoverinfo="skip",
                showlegend=True,
            )
        )
    legend = bool(grid.dots and dot_word)
    shapes = [
        dict(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5, line=dict(color=palette.highlight, width=w))
        for r, c, w in grid.outlines
    ]
    axis = dict(showgrid=False, zeroline=False, fixedrange=True)
    layout = dict(
        BASE_LAYOUT,
        xaxis=dict(axis, visible=False, range=[-0.5, grid.width - 0.5]),
        yaxis=dict(axis, range=[rows - 0.5, -0.5], tickvals=list(range(rows)), ticktext=grid.names),
        height=40 + CELL_PX * rows + (24 if legend else 0),
        margin=dict(l=4, r=4, t=8, b=8),
        dragmode=False,
        shapes=shapes,
        legend=dict(orientation="h", x=0, y=-0.02, yanchor="top"),
    )
    return Prebuilt(dict(data=data, layout=layout))


def lens_figure(
    inputs: Sequence[str],
    tops: Sequence[Sequence[str]],
    probs: np.ndarray,
    grid_data: tuple[np.ndarray, np.ndarray, np.ndarray],
    layer_names: Sequence[str],
    sentences: tuple[str, str],
    text_name: str,
    wanted: int,
    period: int | None,
    picked: int | None,
    prob_word: str,
) -> Prebuilt:
    """The lens: per block of positions (`columns` of them), the input characters, then one row per layer (named
    `layer_names`) with the likeliest next token tops[l][i] coloured by probs[l, i], in bold where it is the token that
    really comes next. `grid_data` is (rank, actual) of that token, (L + 1, T - 1) each, and `first` (L + 1, T) bool;
    `sentences` the hover of a cell with a next token and of the last one, whose fields are customdata [position,
    input, likeliest, its probability, next, its rank, its probability]. A click gives the position."""
    rank, actual, first = grid_data
    width = columns(wanted, [text_name, *layer_names], period)
    grid = Grid(width)
    n = len(inputs)
    shown = [label(c, LABEL_CHARS) for c in inputs]
    for start in range(0, n, width):
        stop = min(n, start + width)
        grid.row(esc(text_name), [math.nan] * (stop - start), shown[start:stop])
        for layer, name in enumerate(layer_names):
            cells = [label(tops[layer][i], LABEL_CHARS) for i in range(start, stop)]
            bold = [f"<b>{c}</b>" if first[layer, start + j] else c for j, c in enumerate(cells)]
            r = grid.row(esc(name), probs[layer, start:stop], bold)
            for i in range(start, stop):
                data = [i, shown[i], cells[i - start], round(float(probs[layer, i]), 4)]
                if i < n - 1:
                    data += [shown[i + 1], int(rank[layer, i]), round(float(actual[layer, i]), 4)]
                template = sentences[0] if i < n - 1 else sentences[1]
                grid.points.append((r, i - start, template.replace("{name}", esc(name)), data))
                if picked == i:
                    grid.outlines.append((r, i - start, 2))
    return figure(grid, prob_word)


def branches_figure(
    rows: Sequence[Sequence[str]],
    probs: np.ndarray,
    greedy: tuple[Sequence[Sequence[str]], np.ndarray, np.ndarray],
    names: Sequence[str],
    sentence: str,
    parted: np.ndarray,
    wanted: int,
    picked: tuple[int, int] | None,
    prob_word: str,
    greedy_word: str,
) -> Prebuilt:
    """The branches: per block of characters (`columns` of them), one row per temperature (named `names`), each
    character coloured by the probability it was drawn with; outlined where the rows part, dotted where the draw was
    not the greedy choice (greedy: its characters, their probabilities and where the draw was another, (R, n) each),
    `picked` (row, index) outlined too.
    `sentence` is the hover, its fields customdata [row, index, index from 1, drawn, its probability, greedy, its
    probability]. A click gives [row, index]."""
    width = columns(wanted, names)
    grid = Grid(width)
    chosen, chosen_p, off = greedy
    n = max((len(r) for r in rows), default=0)
    for start in range(0, n, width):
        stop = min(n, start + width)
        for b, row in enumerate(rows):
            cells = [label(c, LABEL_CHARS) for c in row]
            r = grid.row(esc(names[b]), probs[b, start:stop], cells[start:stop])
            template = sentence.replace("{name}", esc(names[b]))
            for i in range(start, stop):
                best = label(chosen[b][i], LABEL_CHARS)
                data = [b, i, i + 1, cells[i], round(float(probs[b, i]), 4), best, round(float(chosen_p[b, i]), 4)]
                grid.points.append((r, i - start, template, data))
                if parted[b, i] or picked == (b, i):
                    grid.outlines.append((r, i - start, 4 if picked == (b, i) else 2))
                if off[b, i]:
                    grid.dots.append((r, i - start))
    return figure(grid, prob_word, greedy_word)
