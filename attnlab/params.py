"""Page parameters that travel in the URL: how each is parsed, bounded and written back.

Pure Python, no Streamlit. A parser returns the value or raises `Invalid` naming the message key
and the value it fell back to, so the page can tell the user in their language. A bound is written
once, on its `Param`: the URL parser enforces it and the widget that edits the value reads it.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnlab.limits import MAX_TEXT_CHARS

TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off"}


class Invalid(ValueError):
    """A value that cannot be honoured; `used` is what replaces it, `reason` a locale key, `fmt` its fields."""

    def __init__(self, reason: str, used: Any, **fmt: Any) -> None:
        super().__init__(reason)
        self.reason, self.used, self.fmt = reason, used, fmt


def parse_number(raw: str) -> float:
    """A finite float from text, or ValueError; accepts '1e3', ' 2 ', '-0.5' and full-width digits."""
    value = float(unicodedata.normalize("NFKC", str(raw)).strip())
    if not math.isfinite(value):
        raise ValueError(f"not finite: {raw!r}")
    return value


def dump_float(value: float) -> str:
    """A short, exact-enough text form for the URL and for messages: 0.6, 10, -1.25."""
    text = f"{float(value):.10g}"
    return "0" if text == "-0" else text


def dump_bool(value: bool) -> str:
    """Booleans travel as `true`/`false` in the URL."""
    return "true" if value else "false"


def dump_list(values: Sequence) -> str:
    """A list travels as a comma list in the URL."""
    return ",".join(str(v) for v in values)


@dataclass(frozen=True)
class Param:
    """One piece of page state that lives in the URL query under `name`, with the bounds its widget shows."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = field(default=str)
    lo: float | None = None  # smallest value a number may take (None: not a number)
    hi: float | None = None
    options: tuple = ()  # the values a choice may take (empty: not a choice)

    def read(self, raw: str | None) -> tuple[Any, Invalid | None]:
        """The value a link's text gives this parameter (the default when absent), and why it was replaced, if it was:
        the page and the notebook writer read a link through this one method."""
        if raw is None:
            return self.default, None
        try:
            return self.parse(raw), None
        except Invalid as bad:
            return bad.used, bad


def int_param(name: str, default: int, lo: int, hi: int) -> Param:
    """A whole number in [lo, hi]; out of range is clamped, anything else falls back to the default."""

    def parse(raw: str) -> int:
        try:
            value = parse_number(raw)
        except (ValueError, OverflowError):
            raise Invalid("not_int", default) from None
        if not value.is_integer():
            raise Invalid("not_int", default)
        if value < lo or value > hi:
            raise Invalid("out_of_range", min(max(int(value), lo), hi), lo=lo, hi=hi)
        return int(value)

    return Param(name, default, parse, str, lo, hi)


def float_param(name: str, default: float, lo: float, hi: float) -> Param:
    """A finite number in [lo, hi]; out of range is clamped, non-numbers fall back to the default."""

    def parse(raw: str) -> float:
        try:
            value = parse_number(raw)
        except (ValueError, OverflowError):
            raise Invalid("not_number", default) from None
        if value < lo or value > hi:
            raise Invalid("out_of_range", min(max(value, lo), hi), lo=dump_float(lo), hi=dump_float(hi))
        return value

    return Param(name, default, parse, dump_float, lo, hi)


def bool_param(name: str, default: bool) -> Param:
    """true/false in the URL (1/0, yes/no and on/off are understood too)."""

    def parse(raw: str) -> bool:
        word = str(raw).strip().lower()
        if word in TRUE:
            return True
        if word in FALSE:
            return False
        raise Invalid("not_bool", default)

    return Param(name, default, parse, dump_bool)


def _by_text(options: tuple) -> dict[str, Any]:
    """Options looked up by their text, case-insensitively: how a value written in a URL finds its option."""
    return {str(o).lower(): o for o in options}


def choice_param(name: str, default: Any, options: Sequence) -> Param:
    """One of `options`, named in the URL by its text (case does not matter)."""
    options = tuple(options)
    by_text = _by_text(options)

    def parse(raw: str) -> Any:
        word = str(raw).strip().lower()
        if word in by_text:
            return by_text[word]
        raise Invalid("not_choice", default, options=", ".join(map(str, options)))

    return Param(name, default, parse, str, options=options)


def list_param(name: str, default: Sequence, options: Sequence) -> Param:
    """A comma list whose items must be among `options`; unknown items are dropped (and said)."""
    options = tuple(options)
    by_text = _by_text(options)

    def parse(raw: str) -> list:
        items = [s.strip().lower() for s in str(raw).split(",") if s.strip()]
        chosen = {by_text[item] for item in items if item in by_text}
        good = [o for o in options if o in chosen]  # canonical order, no repeats
        if len(chosen) < len(set(items)) or not good:
            raise Invalid("not_choice", good or list(default), options=", ".join(map(str, options)))
        return good

    return Param(name, list(default), parse, dump_list, options=options)


def open_param(sections: Sequence[str]) -> Param:
    """`open`: which of a page's folded sections are open, a comma list of their names (empty or none: none, the
    default). An unknown name is dropped (and said); the known ones stay open."""
    options = tuple(sections)

    def parse(raw: str) -> list[str]:
        items = [s.strip().lower() for s in str(raw).split(",") if s.strip()]
        items = [s for s in items if s not in NONE_WORDS]  # `open=none` opens none
        good = [o for o in options if o in items]  # canonical order, no repeats
        if len(good) < len(set(items)):
            raise Invalid("not_choice", good, options=", ".join(options))
        return good

    return Param("open", [], parse, dump_list, options=options)


def next_even(value: int, hi: int) -> int:
    """The even number a link's or a widget's odd width becomes: the one above, or below at the cap."""
    return value + 1 if value + 1 <= hi else value - 1


def even_int_param(name: str, default: int, lo: int, hi: int) -> Param:
    """A whole even number in [lo, hi] (lo and hi even): an odd one becomes `next_even` (and said)."""
    whole = int_param(name, default, lo, hi)

    def parse(raw: str) -> int:
        value = whole.parse(raw)
        if value % 2:
            raise Invalid("odd", next_even(value, hi))
        return value

    return Param(name, default, parse, str, lo, hi)


def above_param(name: str, default: float, above: float, hi: float) -> Param:
    """A finite number strictly above `above` and at most `hi`: at or below `above` it is the default (and said),
    past `hi` it is clamped. The widget's lower end is `above` itself; the page replaces that value the same way."""

    def parse(raw: str) -> float:
        try:
            value = parse_number(raw)
        except (ValueError, OverflowError):
            raise Invalid("not_number", default) from None
        if value <= above:
            raise Invalid("not_above", default, lo=dump_float(above))
        if value > hi:
            raise Invalid("out_of_range", hi, lo=dump_float(above), hi=dump_float(hi))
        return value

    return Param(name, default, parse, dump_float, above, hi)


NONE_WORDS = {"", "none", "off", "no"}  # what an optional number is in a link when there is none


def dump_optional(value: int | None) -> str:
    """An optional whole number travels as itself, or `none`."""
    return "none" if value is None else str(value)


def optional_int_param(name: str, lo: int, hi: int) -> Param:
    """A whole number in [lo, hi], or None (absent, or `none` in the link); default None.

    Below `lo` means none (reason `below_lo`, said); above `hi` is clamped; anything else falls back to None.
    """

    def parse(raw: str) -> int | None:
        if str(raw).strip().lower() in NONE_WORDS:
            return None
        try:
            value = parse_number(raw)
        except (ValueError, OverflowError):
            raise Invalid("not_int", None) from None
        if not value.is_integer():
            raise Invalid("not_int", None)
        if value < lo:
            raise Invalid("below_lo", None, lo=lo)
        if value > hi:
            raise Invalid("out_of_range", hi, lo=lo, hi=hi)
        return int(value)

    return Param(name, None, parse, dump_optional, lo, hi)


def text_param(name: str, default: str, max_chars: int = MAX_TEXT_CHARS) -> Param:
    """Free text, cut at `max_chars` (and said so)."""

    def parse(raw: str) -> str:
        if len(raw) > max_chars:
            raise Invalid("too_long", raw[:max_chars], max_chars=max_chars)
        return raw

    return Param(name, default, parse)


def divisor_at_most(d_model: int, heads: int) -> int:
    """The largest divisor of d_model not above `heads` (at least 1)."""
    return max(h for h in range(1, max(1, min(heads, d_model)) + 1) if d_model % h == 0)


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending: the head counts that split d_model evenly."""
    return [h for h in range(1, n + 1) if n % h == 0]
