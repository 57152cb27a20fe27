"""Margins a heatmap's labels and colour bar need, worked out before the browser draws it, so Plotly measures less.

Plotly's automargin draws a chart, measures its tick labels and colour bar, and, when they need more room than the
layout's margins give, draws the whole chart again. Every heatmap paid that second draw (24 heatmap traces painted
50 times on the Multi-head page at 64 tokens x 64 heads). The margins written here are upper bounds of what the labels
take. Where every label is made of characters whose widths were measured (`bounded`), automargin is turned off as
well, since measuring the labels then tells Plotly nothing: it measured every label in the browser, one forced layout
each, a third of the drawing of that page. Labels with other characters (emoji, other scripts, symbols) keep
automargin, so they still get their room, at the old cost.

Widths are in ems of the chart's font: upper bounds over the fonts a browser falls back to, measured in Chromium
(canvas `measureText`; tests/e2e/test_label_widths.py measures them again). For Latin text DejaVu Sans is the widest
(lowercase letters 0.56 em on average, m 0.97; capitals 0.67, W 0.99, Œ 1.07; # and ^ 0.84; @ 1.02 in Arial). Noto Sans
CJK, which draws Latin text too where Noto Sans is not installed, sets curly quotes, the middle dot and ×, ±, ÷, ∞ a
full em; CJK characters are 1 em in every font. A margin also keeps Plotly's 12-px pad beyond the widest label.
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence

PAD = 12  # px Plotly adds to every pushed margin (`margin.pad`'s cap when every margin is at least 12 px)
LABEL_GAP = 4  # px between an axis and its tick labels (no tick marks are drawn)
LINE_EM = 1.3  # a label's height in ems
SLANT = math.sqrt(0.5)  # labels at -45 degrees: sin 45 = cos 45
COLORBAR_X = 1.0  # the colour bar starts at the plot's right edge (Plotly's 1.02 adds 2% of a width not known here)
COLORBAR_XPAD = 10  # px, Plotly's default
COLORBAR_THICKNESS = 10  # px, the heatmaps' bars
COLORBAR_GAP = 8  # px from the bar to its labels, with the bar's outline and a pixel or two of slack
COLORBAR_MAX_TICKS = 10  # Plotly puts at most 10 ticks on a colour bar (one per 40 px of it, 4 to 9, plus one)
WIDE = frozenset("WF")  # east-asian widths that take a full em
EMS = {  # characters wider than their class (a lowercase letter 0.65 em, a capital 0.8), at their widest measured
    **dict.fromkeys("#^+<=>~&−", 0.85),
    **dict.fromkeys("mwMW%ĦħŉÆæ…—‘’“”·×±÷∞", 1.0),  # the quotes, dot and signs: full width in Noto Sans CJK
    **dict.fromkeys("@Œœ", 1.1),
}
MEASURED_PUNCTUATION = frozenset("–—‘’“”…·−±×÷∞\u200b")  # outside ASCII, what `em_width` bounds besides letters


def em_width(text: str) -> float:
    """An upper bound of `text`'s width in ems, as Plotly shows it (escaped HTML read back, zero-width spaces none)."""
    return sum(_em(ch) for ch in html.unescape(text).replace("\u200b", ""))


def _em(ch: str) -> float:
    """One character's width bound in ems: an accented letter's is its base letter's (Ŵ is W's)."""
    if ch in EMS:
        return EMS[ch]
    if unicodedata.east_asian_width(ch) in WIDE:
        return 1.0
    base = unicodedata.normalize("NFD", ch)[0]
    if base != ch:
        return _em(base)
    return 0.8 if ch.isupper() else 0.65


def _measured(ch: str) -> bool:
    """Whether `em_width` bounds this character: printable ASCII, Latin letters (U+00C0 to U+017F), the punctuation
    above, CJK (east-asian wide letters, digits and punctuation: emoji and other wide symbols are not)."""
    if " " <= ch <= "~" or ch in MEASURED_PUNCTUATION:
        return True
    if "\u00c0" <= ch <= "\u017f":
        return ch.isalpha()
    return unicodedata.east_asian_width(ch) in WIDE and unicodedata.category(ch)[0] in "LNPZ" and ch < "\U0001f000"


def bounded(labels: Sequence[str]) -> bool:
    """Whether every label (escaped HTML read back) is made of characters `em_width` bounds, so that a margin from it
    holds the label in any of the fonts measured, and Plotly need not measure it in the browser."""
    return all(_measured(ch) for text in labels for ch in html.unescape(text))


def widest(labels: Sequence[str]) -> float:
    """The widest of `labels` in ems (0 for none)."""
    return max((em_width(text) for text in labels), default=0.0)


def colorbar_labels(zmin: float, zmax: float) -> list[str]:
    """The longest tick labels a colour bar over zmin..zmax can carry: its ends at the finest step Plotly picks."""
    span = zmax - zmin
    if not (math.isfinite(span) and span > 0):
        return [f"{zmin:.6g}"]
    step = 10 ** math.floor(math.log10(span / COLORBAR_MAX_TICKS))  # Plotly rounds the rough step up to 1, 2 or 5
    digits = max(0, -math.floor(math.log10(step)))
    return [f"{z:.{digits}f}".replace("-", "−") for z in (zmin, zmax)]


def heatmap_margin(
    base: dict,
    font_px: float,
    y_labels: Sequence[str],
    x_labels: Sequence[str],
    *,
    slanted: bool,
    colorbar: tuple[float, float] | None,
) -> dict:
    """`base` widened to the room a heatmap's row labels (left), column labels (bottom, and left when slanted: the
    first one reaches past the plot's left edge) and colour bar over `colorbar`'s range (right) take."""
    line = LINE_EM * font_px
    left = widest(y_labels) * font_px + LABEL_GAP
    bottom = line + LABEL_GAP
    if slanted and x_labels:
        bottom = (widest(x_labels) * font_px + line) * SLANT + LABEL_GAP
        left = max(left, (em_width(x_labels[0]) * font_px + line) * SLANT)
    margin = dict(base, l=max(base["l"], math.ceil(left + PAD)), b=max(base["b"], math.ceil(bottom + PAD)))
    if colorbar is not None:
        right = COLORBAR_XPAD + COLORBAR_THICKNESS + COLORBAR_GAP + widest(colorbar_labels(*colorbar)) * font_px
        margin["r"] = max(base["r"], math.ceil(right + PAD))
    return margin
