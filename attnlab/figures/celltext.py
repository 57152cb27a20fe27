"""What a heatmap writes in its cells, at a size its cells hold: the values' numbers and blocked cells' "−∞".

Plotly fits a heatmap's cell text to its cells and writes it however small that comes out; these predict its fit, so a
chart keeps only text that can be read (tests/e2e/test_cell_text.py draws each case in Chromium and reads it back).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attnlab.figures.margins import em_width
from attnlab.figures.prebuilt import BASE_LAYOUT

MIN_TEXT_PX = 7  # cell text is written only where its font comes to this or more: smaller is clutter, not text (two
# heads of six tokens side by side on a 390-px phone got 5-px numbers; 64 heads' 64 x 1 panels on a desktop, 13-px
# numbers overlapping in 8-px rows), and each number cost the phone a millisecond to lay out (issue 61). Four heads
# of six tokens on a desktop keep their 7-px numbers, as they had them.
LINE_SPACING = 1.3  # Plotly's line height in ems (`constants/alignment.js`), with which it fits text to a cell
BLOCKED_LABEL = "−∞"  # what a blocked cell says, in a font that fits it inside its cell (`legible`)


def spacing(length_px: float, n: int) -> float:
    """The fewest pixels between two neighbouring cells' centres, as Plotly rounds them (`length_px` if only one)."""
    if n < 2:
        return length_px
    centres = np.floor(np.arange(n) * (length_px / n) + length_px / n / 2 + 0.5)  # JavaScript's Math.round
    return float(np.diff(centres).min())


def cell_font_px(m: np.ndarray, plot_w: float, plot_h: float, gap: int) -> int:
    """The largest font, up to the chart's, at which `m`'s longest cell value fits its cell in a `plot_w` x `plot_h`
    plot: Plotly's own fit for heatmap text (`textfont.size` auto) gives each character half a line height across
    and one line down, the cells measured between their centres as drawn, less the gap.

    Plotly fits nothing when the matrix is one row or one column (it takes the chart's font, whatever the cells'
    size); this measures those cells too, which is what decides whether their numbers are legible.
    """
    finite = np.asarray(m, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    chars = max(len(f"{v:.2f}") for v in (finite.min(), finite.max())) if finite.size else 1
    n_rows, n_cols = np.shape(m)
    across = (spacing(plot_w, n_cols) - gap) / chars / (LINE_SPACING / 2)
    down = (spacing(plot_h, n_rows) - gap) / LINE_SPACING
    return min(math.floor(across), math.floor(down), BASE_LAYOUT["font"]["size"])


def blocked_font_px(n_rows: int, n_cols: int, plot_w: float, plot_h: float, gap: int) -> int:
    """The largest font, up to the chart's, at which `BLOCKED_LABEL` fits inside a cell with a pixel to spare on each
    side. Plotly's own fit gives each character half a line height across, and "−∞" is wider than two such halves:
    at its fit, or at the chart's 13 px in cells under 25 px, neighbouring labels ran into each other ("−∞−∞−∞")."""
    across = (spacing(plot_w, n_cols) - gap - 2) / em_width(BLOCKED_LABEL)
    down = (spacing(plot_h, n_rows) - gap) / LINE_SPACING
    return min(math.floor(across), math.floor(down), BASE_LAYOUT["font"]["size"])


def legible(traces: list[dict], mats: Sequence[np.ndarray], plot_w: float, plot_h: float) -> list[dict]:
    """`traces` (the values first) without the values' cell text when the longest of `mats` (the chart's panels,
    each drawn `plot_w` x `plot_h`) would be written under `MIN_TEXT_PX`: the hover still says each value. A blocked
    layer's "−∞" is given the font that fits its cells, or left out under `MIN_TEXT_PX` (the grey and the hover say it).
    """
    values, *others = traces
    if values.get("texttemplate") is not None:
        if min(cell_font_px(m, plot_w, plot_h, values["xgap"]) for m in mats) < MIN_TEXT_PX:
            values = dict(values, texttemplate=None)
    blocked = []
    for layer in others:
        if layer.get("texttemplate") is not None:
            n_rows, n_cols = np.shape(mats[0])
            size = blocked_font_px(n_rows, n_cols, plot_w, plot_h, layer["xgap"])
            layer = (
                dict(layer, textfont=dict(layer["textfont"], size=size))
                if size >= MIN_TEXT_PX
                else {k: v for k, v in layer.items() if k not in ("text", "texttemplate")}
            )
        blocked.append(layer)
    return [values, *blocked]
