"""The same figure for a classroom projector: large type, every label kept, numbers in the cells of short texts."""

from __future__ import annotations

import attnlab.figures.screen as screen
from attnlab.figures.prebuilt import BASE_LAYOUT, Prebuilt

PROJECTOR_FONT = 20  # px: labels and titles legible from the back of a classroom at 1280 x 720
TITLE_FONT = PROJECTOR_FONT + 2  # px: the panels' titles
PROJECTOR_TEXT_MAX_ROWS = 12  # up to this many rows every cell carries its number
CELL_TEXT_MAX = PROJECTOR_FONT - 2  # px: a cell's number where a dozen columns or fewer sit side by side
CELL_TEXT_MIN = 10  # px: the smallest number a projector still shows
# px of font size per column across, so that "-1.91" (about 2.8 ems) fits its cell: the cells take about 0.85 of the
# chart's width (`figures.screen`), 700 of the 820 px at 1280 x 720 with the sidebar open, 700 / 2.8 = 250 (four RoPE
# panels of 4 columns ran together at 18; a chart beside a step's questions is narrower still)
CELLS_SHARE, NUMBER_EMS = 0.85, 2.8


def text_px_across() -> int:
    """Font size times columns that the chart's cells hold: its width's share for cells over a number's ems."""
    return int(screen.width() * CELLS_SHARE / NUMBER_EMS)


def projector(fig: Prebuilt, *, n_rows: int) -> Prebuilt:
    """The same figure for a projector: large type, every row and column label kept, numbers in cells for short texts.

    Returns a new figure; the one passed in is left as it was.
    """
    spec = fig.to_dict()
    layout = dict(spec["layout"], font=dict(BASE_LAYOUT["font"], size=PROJECTOR_FONT))
    layout["height"] = max(480, int(layout.get("height", 400) * 1.5))
    for name, axis in spec["layout"].items():
        if name.startswith(("xaxis", "yaxis")):
            layout[name] = dict(axis, dtick=1, tickfont=dict(size=PROJECTOR_FONT), automargin=True)
    layout["annotations"] = _titles(spec["layout"])
    top = max(map(screen.lines, (a["text"] for a in layout["annotations"])), default=0)
    layout["margin"] = dict(layout["margin"], t=max(layout["margin"]["t"], screen.line_px(TITLE_FONT, top) + 10))
    values = n_rows <= PROJECTOR_TEXT_MAX_ROWS
    size = cell_text_size(columns_across(spec))
    data = []
    for trace in spec["data"]:
        trace = dict(trace)
        if trace.get("type") == "heatmap":
            if trace.get("name") == "blocked":
                trace["textfont"] = dict(trace.get("textfont", {}), size=size)
            elif values:
                trace.update(texttemplate="%{z:.2f}", textfont=dict(size=size))
        data.append(trace)
    return Prebuilt(dict(data=data, layout=layout))


def _titles(layout: dict) -> list[dict]:
    """The panels' titles in the projector's larger type, wrapped again to their panels' width (panel i's title is
    annotation i, over x axis i)."""
    margin = layout["margin"]
    plot_px = screen.width() - (margin["l"] + margin["r"]) * PROJECTOR_FONT / BASE_LAYOUT["font"]["size"]
    titles = []
    for i, note in enumerate(layout.get("annotations", [])):
        domain = layout.get("xaxis" + ("" if i == 0 else str(i + 1)), {}).get("domain", (0.0, 1.0))
        text = screen.fit(note["text"].replace("<br>", " "), plot_px * (domain[1] - domain[0]), TITLE_FONT)
        titles.append(dict(note, text=text, font=dict(size=TITLE_FONT)))
    return titles


def columns_across(spec: dict) -> int:
    """How many heatmap columns sit side by side in a figure: the columns of each horizontal place a panel takes
    (its x axis's domain) once, so a grid's second row of panels and a panel's blocked-cell layer add none."""
    widths: dict[tuple, int] = {}
    for trace in spec["data"]:
        if trace.get("type") == "heatmap":
            axis = spec["layout"].get("xaxis" + trace.get("xaxis", "x")[1:], {})
            widths.setdefault(tuple(axis.get("domain", (0.0, 1.0))), len(trace.get("x") or []))
    return sum(widths.values())


def cell_text_size(across: int) -> int:
    """The cells' font size when `across` columns share the chart's width: 18 px up to a dozen, smaller as panels
    are added so that each number fits its cell, never under 10 px."""
    return max(CELL_TEXT_MIN, min(CELL_TEXT_MAX, text_px_across() // max(across, 1)))
