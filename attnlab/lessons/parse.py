"""Parsers for lesson inputs that arrive as text (URL query, typed vectors); no Streamlit here."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from attnlab.params import Invalid, parse_number

MAX_DIM = 8
_SPLIT = re.compile(r"[\s,;，、]+")


def float_in(lo: float, hi: float, default: float) -> Callable[[str], float]:
    """A parser for a finite number in [lo, hi]; out of range is clamped, non-numbers use default."""

    def parse(raw: str) -> float:
        try:
            value = parse_number(raw)
        except (ValueError, OverflowError):
            raise Invalid("not_number", default) from None
        if value < lo or value > hi:
            raise Invalid("out_of_range", min(max(value, lo), hi), lo=dump_float(lo), hi=dump_float(hi))
        return value

    return parse


def dump_float(value: float) -> str:
    """A short, exact-enough text form for the URL and for messages: 0.6, 10, -1.25."""
    text = f"{float(value):.10g}"
    return "0" if text == "-0" else text


def parse_vector(raw: str, max_abs: float = 100.0) -> list[float]:
    """'1.5, 2 -0.5' -> [1.5, 2.0, -0.5]; ValueError (with a short English reason) when it cannot be used."""
    parts = [p for p in _SPLIT.split(str(raw).strip()) if p]
    if not parts:
        raise ValueError("empty")
    if len(parts) > MAX_DIM:
        raise ValueError("too_long")
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise ValueError("not_number") from None
        if not math.isfinite(value) or abs(value) > max_abs:
            raise ValueError("too_large")
        values.append(value)
    return values


def dump_vector(values: list[float]) -> str:
    """[1.5, 2.0] -> '1.5, 2'."""
    return ", ".join(dump_float(v) for v in values)
