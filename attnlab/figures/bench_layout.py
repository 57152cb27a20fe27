"""Where a Benchmark chart's legend goes: below the plot, clear of the x axis's labels, at any width (no Streamlit).

Plotly wraps a horizontal legend to the width it gets in the browser and makes room for it (automargin), and it makes
room for the x axis's tick labels and title too, but each on its own: the bottom margin is the larger of the two,
not their sum, so a legend of several rows slid over the axis title (issue 50: "Peak memory" at 1400 px, every chart
at 390 px). Here the legend hangs a fixed share of the plot's height below it (`legend.y`, paper units): that gap
holds the axis's labels at the plot's smallest height, and the figure is tall enough that the plot keeps that height
with the legend as many rows as it needs on a phone, where it wraps most. On a wider screen the legend takes fewer
rows and the plot grows, and with it the gap. Widths are bounded with `margins.em_width` (upper bounds measured in
Chromium), so the rows are never more than counted here. Measured in Chromium at 390 px (a 358-px chart): tick labels
and the axis title reach 51 px below the plot, a legend row is 19 px, an entry's line and gaps add 43 px to its text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from attnlab.figures.margins import PAD, em_width
from attnlab.figures.prebuilt import BASE_LAYOUT

NARROW_PX = 260  # what a legend may span on a 390-px phone: the plot's width (the chart's 358 px less the y axis)
AXIS_BELOW_PX = 58  # x tick labels and the axis title under the plot (51 measured), with room for CJK titles
GAP_PX = 8  # between the axis title and the legend
ROW_PX = 19  # one legend row (one line of text)
LINE_PX = 16  # each further line of a multi-line entry
LEGEND_PAD_PX = 10  # the legend's own padding, top and bottom together
ENTRY_PX = 46  # an entry's line, marker and gaps beside its text (43 measured)
ENTRY_GAP_PX = 2  # Plotly's gap between entries in a row
FONT_PX = BASE_LAYOUT["font"]["size"]
BELOW = dict(orientation="h", xref="paper", yref="paper", x=0.0, yanchor="top", xanchor="left")  # `hang` sets y


def entry_px(name: str) -> float:
    """An upper bound of one legend entry's width: its widest line of text and the line symbol beside it."""
    return max(em_width(line) for line in name.split("<br>")) * FONT_PX + ENTRY_PX


def legend_px(names: Sequence[str], width: float = NARROW_PX) -> int:
    """The legend's height at `width`: one row when every entry fits in it, else columns as wide as the widest entry
    (Plotly's horizontal wrap), each row as tall as its tallest entry."""
    if not names:
        return 0
    widths = [entry_px(n) + ENTRY_GAP_PX for n in names]
    lines = [n.count("<br>") for n in names]
    cols = len(names) if sum(widths) <= width else max(1, int(width // max(widths)))
    rows = [max(lines[i : i + cols]) for i in range(0, len(names), cols)]
    return sum(ROW_PX + LINE_PX * extra for extra in rows) + LEGEND_PAD_PX


def below(names: Sequence[str], plot_px: int, top_px: int = 60) -> tuple[dict, int]:
    """(the legend's layout, the figure's height) for a legend of `names` under a plot at least `plot_px` tall.

    `plot_px` is the plot's height (the whole plot area with its subplots) on a phone, its smallest; `top_px` the
    margin the title takes.
    """
    share = (AXIS_BELOW_PX + GAP_PX) / plot_px
    legend = dict(BELOW, y=-share)
    height = top_px + math.ceil(plot_px * (1 + share)) + legend_px(names) + PAD
    return legend, height


def hang(fig: go.Figure, plot_px: int) -> go.Figure:
    """`fig` with its legend hung below the plot (`below`), its height counted from the top margin it was given."""
    names = [tr.name for tr in fig.data if tr.name and tr.showlegend is not False]
    legend, height = below(names if fig.layout.showlegend is not False else [], plot_px, fig.layout.margin.t or 0)
    fig.layout.update(legend=legend, height=height)
    return fig


def wrap(name: str, width: float = NARROW_PX) -> str:
    """A legend name broken at its ' · ' separators into lines that fit a phone's legend (an escaped name in, the
    same with '<br>' between lines out); a part too long for a line keeps a line of its own."""
    budget = (width - ENTRY_PX) / FONT_PX  # ems of text beside the line symbol
    lines: list[str] = []
    for part in name.split(" · "):
        if lines and em_width(f"{lines[-1]} · {part}") <= budget:
            lines[-1] = f"{lines[-1]} · {part}"
        else:
            lines.append(part)
    return "<br>".join(lines)
