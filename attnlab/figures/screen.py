"""How wide this session's charts are, and chart text fitted to that width: titles wrapped, legends given their rows.

Figures are built on the server, which does not know the browser's width: a probe in the page
(`attnlab.ui.app.screen`) reports the main column's width as one of `BANDS`, and each run hands it to `use()`, the way
`palette.use()` hands over the colours (a ContextVar, so one session's width never reaches another's figures). Until
the browser has said (its first run, a notebook, a test) the width is `DEFAULT_PX`, a desktop's. Each band is the
narrowest width it stands for, so text fitted to it fits the chart it is drawn in.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from attnlab.figures.margins import em_width

BANDS = (300, 340, 480, 640, 800)  # px: a 360-px phone's charts are 328 wide, a 390-px one's 358, 1280 x 720's 820
DEFAULT_PX = BANDS[-1]
COLUMNS_FROM = 480  # from this band on, Streamlit's st.columns sit side by side (they stack under a 640-px viewport)
COLUMN_GAP = 16  # px between two st.columns
LINE_EM = 1.25  # a line of a wrapped title, in ems of its font
LEGEND_ROW_PX = 20  # px: one row of a horizontal legend at the charts' 13-px font
LEGEND_ITEM_PX = 46  # px around each legend entry's text: its line sample (40) and the gap to the next entry
_width: ContextVar[int] = ContextVar("chart_width", default=DEFAULT_PX)
_share: ContextVar[float] = ContextVar("chart_share", default=1.0)


def band(px: float) -> int:
    """The band a chart width falls in: the widest band not wider than it (the narrowest for anything smaller)."""
    return max([b for b in BANDS if b <= px] or [BANDS[0]])


def use(px: int | None) -> None:
    """Build this run's figures for charts `px` wide (None: not known yet, a desktop's)."""
    _width.set(DEFAULT_PX if px is None else band(px))


def band_in_use() -> int:
    """The band this run's figures are built for: the whole column's, whatever part `share()` has set aside."""
    return _width.get()


def width(share: float = 1.0) -> int:
    """The width a chart has: the whole column (or the part `share()` set aside), or `share` of it for a chart in
    st.columns where they sit side by side (on a phone they stack, each the whole width)."""
    px = _width.get()
    if px < COLUMNS_FROM:
        return px
    part = share * _share.get()
    return px if part >= 1 else int(px * part - COLUMN_GAP)


def phone() -> bool:
    """Whether this run's charts are built for a phone's column (a band under `COLUMNS_FROM`, where st.columns
    stack): the one test of it for the figures, the toolbar and the drag action."""
    return _width.get() < COLUMNS_FROM


@contextmanager
def at(px: int) -> Iterator[None]:
    """Figures built inside are laid out for charts `px` wide, whatever this session's browser reported (a file
    downloaded to be opened elsewhere)."""
    token = _width.set(band(px))
    try:
        yield
    finally:
        _width.reset(token)


@contextmanager
def share(part: float) -> Iterator[None]:
    """Figures built inside take `part` of the column's width (a chart in a column of st.columns, built by code that
    does not know it is)."""
    token = _share.set(_share.get() * part)
    try:
        yield
    finally:
        _share.reset(token)


NO_BREAK_BEFORE = frozenset("，。、：；！？）」』》")  # CJK punctuation that closes: kept on the line before it
_UNIT = re.compile(r"<[^>]*>|&[#\w]+;|.", re.S)  # a tag (no width), an entity (one character), or one character


def _units(text: str) -> list[str]:
    return _UNIT.findall(text)


def _wide(unit: str) -> bool:
    """A CJK character: a line may break before or after it without a space."""
    return len(unit) == 1 and unicodedata.east_asian_width(unit) in "WF"


def _words(text: str) -> list[tuple[str, str]]:
    """The pieces a line may break between (at spaces, after a slash, around a CJK character), each with what joins
    it to the one before (a space, or nothing)."""
    words: list[tuple[str, str]] = []
    word, gap = "", ""
    for unit in _units(text):
        if unit == "/" and word:  # "∂softmax/∂scores" may break after its slash
            words.append((word + unit, gap))
            word, gap = "", ""
        elif unit in NO_BREAK_BEFORE and (word or words):  # a line never starts with "：" or "）"
            if word:
                word += unit
            else:
                words[-1] = (words[-1][0] + unit, words[-1][1])
        elif unit == " " or _wide(unit):
            if word:
                words.append((word, gap))
                word, gap = "", ""
            if unit == " ":
                gap = " "
            else:
                words.append((unit, gap))
                gap = ""
        else:
            word += unit
    return [*words, (word, gap)] if word else words


def _shorten(text: str, ems: float) -> str:
    """`text` cut to `ems` with an ellipsis (tags and entities kept whole)."""
    out = ""
    for unit in _units(text):
        if em_width(out + unit + "…") > ems:
            return out.rstrip() + "…"
        out += unit
    return out


def fit(text: str | None, px: float, font_px: float, max_lines: int = 2) -> str | None:
    """Escaped `text` wrapped into at most `max_lines` lines of at most `px` (a line break is `<br>`); what still does
    not fit is cut with an ellipsis. A line may break at a space or around a CJK character."""
    if not text:
        return text
    ems = px / font_px
    lines: list[str] = []
    line = ""
    for word, gap in _words(text):
        if not line or em_width(line + gap + word) <= ems:
            line += (gap if line else "") + word
            continue
        lines.append(line)
        line = word
    lines.append(line)
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + [_shorten(" ".join(lines[max_lines - 1 :]), ems)]
    return "<br>".join(line if em_width(line) <= ems else _shorten(line, ems) for line in lines)


def lines(text: str | None) -> int:
    """How many lines a fitted text has (0 for none)."""
    return 0 if not text else text.count("<br>") + 1


def legend_rows(names: Sequence[str], px: float, font_px: float) -> int:
    """How many rows a horizontal legend of `names` takes in `px` (an upper bound: each entry's width is)."""
    rows, used = (1, 0.0) if names else (0, 0.0)
    for name in names:
        item = em_width(name.replace("<br>", " ")) * font_px + LEGEND_ITEM_PX
        if used and used + item > px:
            rows, used = rows + 1, 0.0
        used += item
    return rows


def line_px(font_px: float, n: int = 1) -> int:
    """The height of `n` lines of text at `font_px`."""
    return math.ceil(n * LINE_EM * font_px)
