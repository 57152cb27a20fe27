"""What every line chart shares: its layout, plain ticks on log axes, and series named with their fitted slope."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

import attnlab.figures.screen as screen
from attnlab.bench.memory import format_bytes
from attnlab.figures.margins import em_width
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import BASE_LAYOUT, TEMPLATE
from attnlab.figures.text import esc

# Under the x axis's title at any width: a legend placed in the container is given its rows by Plotly (an above-the-plot
# legend grew upward into the title as it wrapped, on a phone or with long names)
LEGEND = dict(orientation="h", yref="container", y=0.0, yanchor="bottom", x=0.0)
LEGEND_BELOW = LEGEND
BASE_FONT_PX = BASE_LAYOUT["font"]["size"]
TITLE_PX = 18  # a chart title's font, at its largest (Plotly's default, 1.4 x the 13-px font; the app's theme sets 16)
SUBPLOT_TITLE_PX = 16
TITLE_MAX_LINES = 3
SIDE_PX = 20  # of a chart's width, what its title may not use (the margins and Plotly's title pad)
Y_LABELS_PX = 40  # of a chart's width, what its first y axis's tick labels take at most (numbers of up to 4 digits)
TICK_GAP_PX = 6  # between two tick labels of a log axis, so they read as two numbers
AUTORANGE_PAD = 1.1  # Plotly's autorange shows about 5% more than the data on each side (markers take more)
LOG_STEPS = ((1, 2, 5), (1,))  # a decade's ticks, the richest that fits first; then every decade, or every n-th


def line_figure(
    data: list[dict],
    axes: dict,
    title: str | None,
    height: int,
    legend: dict = LEGEND,
    share: float = 1.0,
    **kw,
) -> go.Figure:
    """A chart from plain trace and layout dicts, validated once: its title (escaped), height, legend and margins.

    The title is wrapped to the chart's width (`figures.screen`; `share`: the chart sits in st.columns and takes that
    share of the page), and the top margin holds it and any subplot titles (Plotly sets a title's first line on the
    middle of the top margin and the rest below it); the legend under the plot adds its rows to the height, so the
    plot keeps its size however many rows the legend wraps into.

    Built call by call (add_trace, update_xaxes, add_vline, update_layout; make_subplots, add_trace by row) Plotly
    validates every property of every call: the same figures cost five to ten times as much, most of a lesson
    page's rerun (the saturation chart 106 ms against 15, the soft dictionary's key plane 21 against 4).
    """
    px = screen.width(share) - SIDE_PX
    text = screen.fit(esc(title), px, TITLE_PX, TITLE_MAX_LINES) if title else None
    shown = kw.get("showlegend", True) is not False and legend is LEGEND
    names = [trace["name"] for trace in data if shown and trace.get("name") and trace.get("showlegend", True)]
    rows = screen.legend_rows(names, px, BASE_FONT_PX)
    spec = dict(
        axes,
        template=TEMPLATE,
        height=height + rows * screen.LEGEND_ROW_PX,
        title=dict(text=text, x=0.0),
        margin=dict(l=10, r=10, t=_top(text, axes.get("annotations", ())), b=10),
        legend=legend,
        **kw,
    )
    return go.Figure(dict(data=data, layout=spec))


def _top(title: str | None, annotations) -> int:
    """The top margin: the title's first line on its middle, the title's other lines and the subplot titles below."""
    above = max(
        (screen.lines(a["text"]) for a in annotations if a.get("yanchor") == "bottom" and a.get("y") == 1.0), default=0
    )
    below_middle = screen.line_px(TITLE_PX, screen.lines(title) - 1) + TITLE_PX // 3 if title else 0
    needed = 2 * (below_middle + 6 + screen.line_px(SUBPLOT_TITLE_PX, above)) if title else 0
    return max(60 if title else 30, needed, screen.line_px(SUBPLOT_TITLE_PX, above) + 10)


def scatter(x, y, name: str, **style) -> dict:
    """One scatter trace as a plain dict for `line_figure`, its name escaped."""
    return dict(type="scatter", x=x, y=y, name=esc(name), **style)


def suffix(subplot: int) -> str:
    """How Plotly names a subplot's axes: x and y for the first, x2 and y2 for the second, and so on."""
    return "" if subplot == 1 else str(subplot)


def subplot_row(titles: Sequence[str], spacing: float, share: float = 1.0) -> dict:
    """One row of subplots as make_subplots lays it out: each axis pair's domain and anchors, and each (escaped)
    title as an annotation over its subplot, wrapped to the subplot's width."""
    n = len(titles)
    width = (1.0 - spacing * (n - 1)) / n
    px = (screen.width(share) - SIDE_PX) * width
    axes: dict = {"annotations": []}
    for i, title in enumerate(titles):
        k = suffix(i + 1)
        start = width * i + i * spacing
        domain = [start, start + width]
        axes[f"xaxis{k}"] = dict(anchor=f"y{k}", domain=domain)
        axes[f"yaxis{k}"] = dict(anchor=f"x{k}", domain=[0.0, 1.0])
        axes["annotations"].append(
            dict(
                font=dict(size=SUBPLOT_TITLE_PX),
                showarrow=False,
                text=screen.fit(title, px, SUBPLOT_TITLE_PX),
                x=sum(domain) / 2.0,
                xanchor="center",
                xref="paper",
                y=1.0,
                yanchor="bottom",
                yref="paper",
            )
        )
    return axes


def rule(subplot: int = 1, *, x: float | None = None, y: float | None = None, dash: str, color: str) -> dict:
    """A dashed line across one subplot at `x` (vertical) or `y` (horizontal): the shape add_vline/add_hline write."""
    n = suffix(subplot)
    line = dict(color=color, dash=dash)
    if x is not None:
        return dict(type="line", x0=x, x1=x, xref=f"x{n}", y0=0, y1=1, yref=f"y{n} domain", line=line)
    return dict(type="line", x0=0, x1=1, xref=f"x{n} domain", y0=y, y1=y, yref=f"y{n}", line=line)


def plain_number(x: float) -> str:
    """A tick on a log axis written plainly: 0.001, 0.5, 2, 5000, 10k, 2M, 10B."""
    for above, scale, unit in ((1e9, 1e9, "B"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if x >= above:
            return f"{x / scale:g}{unit}"
    return f"{x:g}"


def axis_px(share: float = 1.0, width: float = 1.0) -> float:
    """About how long an x axis taking `width` of a chart's plot is (the chart `share` of the page), for its ticks:
    never longer than Plotly draws it."""
    return max(1.0, (screen.width(share) - SIDE_PX - Y_LABELS_PX) * width)


def log_ticks(values: Sequence[float], length_px: float) -> dict:
    """Ticks for a log x axis `length_px` long over `values`: 1, 2 and 5 of each decade where their labels have room,
    else every decade, or every n-th, so that no two labels run together. Plotly's own ticks keep four or more however
    short the axis, and "1 2 5 10 2 5 100 2 5 1000" ran together in a third of a phone's chart.

    Returns the axis's tickvals and ticktext (written by `plain_number`): one label alone (a decade where there is one)
    where no two fit, and nothing (Plotly's own choice) where the values hold no 1, 2 or 5 of any decade. Label widths
    are `margins.em_width`'s upper bounds.
    """
    pos = [float(v) for v in values if v > 0 and math.isfinite(v)]
    if not pos or max(pos) <= min(pos):
        return {}
    lo, hi = min(pos), max(pos)
    per_decade = length_px / (math.log10(hi / lo) * AUTORANGE_PAD)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    inside = [e for e in range(first, last + 1) if lo / 1.001 <= 10.0**e <= hi * 1.001]  # the decades shown
    candidates = [[m * 10.0**e for e in range(first, last + 1) for m in steps] for steps in LOG_STEPS]
    candidates += [[10.0**e for e in inside[::n]] for n in range(2, len(inside))]
    for ticks in candidates:
        ticks = [x for x in ticks if lo / 1.001 <= x <= hi * 1.001]
        text = [plain_number(x) for x in ticks]
        if len(ticks) >= 2 and all(
            math.log10(b / a) * per_decade >= (em_width(ta) + em_width(tb)) * BASE_FONT_PX / 2 + TICK_GAP_PX
            for a, b, ta, tb in zip(ticks, ticks[1:], text, text[1:], strict=False)
        ):
            return dict(tickvals=ticks, ticktext=text)
    alone = [10.0**e for e in inside] or [x for x in candidates[0] if lo / 1.001 <= x <= hi * 1.001]
    return dict(tickvals=alone[:1], ticktext=[plain_number(x) for x in alone[:1]]) if alone else {}


def decade_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """1-2-5 ticks covering the values on a log axis, written plainly ('0.05', '2', '100')."""
    pos = [float(v) for v in values if v and v > 0]
    if not pos:
        return [], []
    lo, hi = math.floor(math.log10(min(pos))), math.ceil(math.log10(max(pos)))
    steps = (1, 2, 5) if hi - lo <= 3 else (1,)
    ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in steps]
    ticks = [x for x in ticks if min(pos) / 2.5 <= x <= max(pos) * 2.5]
    return ticks, [f"{x:g}" for x in ticks]


def binary_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """Powers of two covering byte counts on a log axis, written as '4.0 KiB', at most about 8 of them."""
    pos = [float(v) for v in values if v and v > 0]
    if not pos:
        return [], []
    lo, hi = math.floor(math.log2(min(pos))), math.ceil(math.log2(max(pos)))
    step = max(1, -(-(hi - lo) // 7))
    ticks = [2.0**e for e in range(lo, hi + 1, step)]
    return ticks, [format_bytes(x) for x in ticks]


def loglog_axes(
    xs: Sequence[float],
    x_title: str,
    y_title: str,
    y_ticks: tuple[list[float], list[str]] | None = None,
    log_y: bool = True,
) -> dict:
    """Log T axis ticked at the measured T values `xs`, and a log (or linear) y axis with plain ticks."""
    ts = sorted(set(xs))
    yaxis = dict(
        type="log" if log_y else "linear", title=dict(text=esc(y_title)), rangemode=None if log_y else "tozero"
    )
    if y_ticks and y_ticks[0]:
        yaxis.update(tickvals=y_ticks[0], ticktext=y_ticks[1])
    xaxis = dict(type="log", title=dict(text=esc(x_title)), tickvals=ts, ticktext=[f"{x:g}" for x in ts])
    return dict(xaxis=xaxis, yaxis=yaxis)


def with_slope(name: str, slope: float | None, slope_word: str) -> str:
    """A series name with its fitted log-log slope, when there is one: 'sdpa (slope 1.98)'."""
    return esc(name) if slope is None else f"{esc(name)} ({esc(slope_word)} {slope:.2f})"


def loglog_figure(
    series: Sequence[tuple[str, Sequence[float], Sequence[float], float | None]],
    x_title: str,
    y_title: str,
    title: str | None,
    slope_word: str,
    y_ticks: tuple[list[float], list[str]] | None = None,
    share: float = 1.0,
) -> go.Figure:
    """Lines of y against T on log-log axes, each named with its fitted slope (`share`: as `line_figure` takes it)."""
    palette = current()
    data = [
        dict(
            type="scatter",
            x=list(xs),
            y=list(ys),
            mode="lines+markers",
            name=with_slope(name, slope, slope_word),
            line=dict(color=palette.line(i)),
        )
        for i, (name, xs, ys, slope) in enumerate(series)
    ]
    axes = loglog_axes([x for trace in data for x in trace["x"]], x_title, y_title, y_ticks)
    return line_figure(data, axes, title, 340, share=share)
