"""The same figure for a classroom projector: large type, every label kept, numbers in the cells of short texts."""

from __future__ import annotations

from attnlab.figures.prebuilt import BASE_LAYOUT, Prebuilt

PROJECTOR_FONT = 20  # px: labels and titles legible from the back of a classroom at 1280 x 720
PROJECTOR_TEXT_MAX_ROWS = 12  # up to this many rows every cell carries its number


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
    layout["annotations"] = [dict(a, font=dict(size=PROJECTOR_FONT + 2)) for a in spec["layout"].get("annotations", [])]
    values = n_rows <= PROJECTOR_TEXT_MAX_ROWS
    data = []
    for trace in spec["data"]:
        trace = dict(trace)
        if trace.get("type") == "heatmap":
            cols = len(trace.get("x") or [])
            size = PROJECTOR_FONT - 2 if cols <= 12 else 12
            if trace.get("name") == "blocked":
                trace["textfont"] = dict(trace.get("textfont", {}), size=size)
            elif values:
                trace.update(texttemplate="%{z:.2f}", textfont=dict(size=size))
        data.append(trace)
    return Prebuilt(dict(data=data, layout=layout))
