"""Parse values that arrive as text (URL query, pasted cells) and say what was used instead.

Pure Python, no Streamlit: a parser returns the value or raises `Invalid` naming the message
key and the value it fell back to, so the page can tell the user in their language.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off"}


class Invalid(ValueError):
    """A value that cannot be honoured; `used` is what replaces it, `reason` a locale key."""

    def __init__(self, reason: str, used: Any, **fmt: Any) -> None:
        super().__init__(reason)
        self.reason, self.used, self.fmt = reason, used, fmt


def parse_number(raw: str) -> float:
    """A finite float from text, or ValueError; accepts '1e3', ' 2 ', '-0.5'."""
    value = float(str(raw).strip())
    if not math.isfinite(value):
        raise ValueError(f"not finite: {raw!r}")
    return value


def int_in(lo: int, hi: int, default: int) -> Callable[[str], int]:
    """A parser for whole numbers in [lo, hi]; out of range is clamped, non-numbers use default."""

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

    return parse


def boolean(default: bool) -> Callable[[str], bool]:
    """A parser for true/false (1/0, yes/no and on/off are accepted too)."""

    def parse(raw: str) -> bool:
        word = str(raw).strip().lower()
        if word in TRUE:
            return True
        if word in FALSE:
            return False
        raise Invalid("not_bool", default)

    return parse


def choice(options: tuple[str, ...], default: str) -> Callable[[str], str]:
    """A parser that accepts one of `options` (case-insensitive)."""

    def parse(raw: str) -> str:
        word = str(raw).strip().lower()
        if word in options:
            return word
        raise Invalid("not_choice", default, options=", ".join(options))

    return parse


def text(max_chars: int) -> Callable[[str], str]:
    """A parser for free text, cut at `max_chars` (and said so)."""

    def parse(raw: str) -> str:
        if len(raw) > max_chars:
            raise Invalid("too_long", raw[:max_chars], max_chars=max_chars)
        return raw

    return parse


@dataclass(frozen=True)
class Param:
    """One piece of page state that lives in the URL query under `name`."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = field(default=str)


def dump_bool(value: bool) -> str:
    """Booleans travel as `true`/`false` in the URL."""
    return "true" if value else "false"


def divisor_at_most(d_model: int, heads: int) -> int:
    """The largest divisor of d_model not above `heads` (at least 1)."""
    return max(h for h in range(1, max(1, min(heads, d_model)) + 1) if d_model % h == 0)


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending: the head counts that split d_model evenly."""
    return [h for h in range(1, n + 1) if n % h == 0]
