"""A live class's answers as bars, most given on top, the right ones in their own colour and marked with a tick."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from attnlab.figures.lines import line_figure
from attnlab.figures.palette import current
from attnlab.figures.text import label

MAX_BARS = 12  # answers drawn one by one; the rest share one bar
BAR_PX = 30
LABEL_CHARS = 24  # of an answer's text on its bar's axis (the hover shows 80)
RIGHT_MARK = "✓ "


def tally_figure(rows: Sequence[tuple[str, int, bool]], title: str, other: str, x_title: str) -> go.Figure:
    """One horizontal bar per answer (its text, how many gave it, whether it is right), most given on top.

    Past MAX_BARS the least given share one bar named `other` (never right: a right answer is always drawn alone).
    Every answer is text from a student: escaped and cut, never markup.
    """
    palette = current()
    order = lambda r: (-r[1], not r[2], r[0])  # noqa: E731 (most given first, the right one before a tie)
    rows = sorted(rows, key=order)
    right = [r for r in rows if r[2]][:MAX_BARS]
    shown = sorted(right + [r for r in rows if not r[2]][: MAX_BARS - len(right)], key=order)
    rest = sum(r[1] for r in rows) - sum(r[1] for r in shown)
    bars = [((RIGHT_MARK if right else "") + text, n, right) for text, n, right in shown]
    if rest:
        bars.append((other, rest, False))
    y = [label(text, LABEL_CHARS) + "\u200b" * i for i, (text, _, _) in enumerate(bars)]  # equal labels stay apart
    trace = dict(
        type="bar",
        orientation="h",
        x=[n for _, n, _ in bars],
        y=y,
        text=[str(n) for _, n, _ in bars],
        textposition="auto",
        marker=dict(color=[palette.line(2) if right else palette.neutral for _, _, right in bars]),
        customdata=[label(text, 80) for text, _, _ in bars],
        hovertemplate="%{customdata}: %{x}<extra></extra>",
        showlegend=False,
    )
    most = max((n for _, n, _ in bars), default=0)
    xaxis = dict(title=dict(text=label(x_title, 40)), gridcolor=palette.grid, rangemode="tozero")
    axes = dict(
        xaxis=dict(xaxis, dtick=1) if most <= 10 else xaxis,  # whole students: no 0.5 tick on a small class
        yaxis=dict(autorange="reversed", type="category", automargin=True),
    )
    return line_figure([trace], axes, title, 110 + BAR_PX * max(1, len(bars)), showlegend=False)
