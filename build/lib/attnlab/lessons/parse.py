"""Parsers for lesson inputs that arrive as text (URL query, typed vectors); no Streamlit here."""

from __future__ import annotations

import math
import re

from attnlab.limits import MAX_DICTIONARY_DIM
from attnlab.params import dump_float

_SPLIT = re.compile(r"[\s,;，、]+")


def parse_vector(raw: str, max_abs: float = 100.0) -> list[float]:
    """'1.5, 2 -0.5' -> [1.5, 2.0, -0.5]; ValueError (with a short English reason) when it cannot be used."""
    parts = [p for p in _SPLIT.split(str(raw).strip()) if p]
    if not parts:
        raise ValueError("empty")
    if len(parts) > MAX_DICTIONARY_DIM:
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
