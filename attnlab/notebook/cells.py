"""A notebook written as nbformat 4 JSON by hand, and the two ways outside text enters it safely.

No nbformat import: the app builds a notebook on a click and should not load a JSON-schema validator for it
(the tests validate every notebook with nbformat). Outside text (a typed sentence, a model name, a link's raw
value) enters code only as a Python literal (`repr`), which no kernel runs as code, and markdown only inside a
code span whose fence is longer than any run of backticks in it, which Jupyter shows as literal text.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

LOCALES = Path(__file__).resolve().parents[1] / "locales"
NBFORMAT, NBFORMAT_MINOR = 4, 5
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


@functools.lru_cache(maxsize=2)  # one entry per language (en, zh: a link's lang is checked before it gets here)
def words(lang: str) -> dict[str, str]:
    """The notebook's sentences in one language (`attnlab/locales/<lang>/takeout.toml`), plus page titles."""
    table = tomllib.loads((LOCALES / lang / "takeout.toml").read_text(encoding="utf-8"))
    nav = tomllib.loads((LOCALES / lang / "nav.toml").read_text(encoding="utf-8"))
    stages = tomllib.loads((LOCALES / lang / "stages.toml").read_text(encoding="utf-8"))
    return {**{f"nav.{k}": v for k, v in nav.items()}, **{f"stages.{k}": v for k, v in stages.items()}, **table}


def code_span(text: object, limit: int = 200) -> str:
    """Outside text as one inline code span: cut at `limit`, line breaks shown as spaces, fenced past its backticks."""
    raw = str(text)
    raw = raw if len(raw) <= limit else raw[:limit] + "…"
    raw = re.sub(r"[\r\n\t]+", " ", raw)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", raw)), default=0) + 1)
    return f"{fence} {raw} {fence}"


def lit(value: Any) -> str:
    """A value as a Python literal for a code cell (strings escaped by `repr`: never code)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    if isinstance(value, (bool, int, float, str)) or value is None:
        return repr(value)
    raise TypeError(f"no literal for {type(value).__name__}")


def _cell(kind: str, source: str, n: int, meta: dict | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "cell_type": kind,
        "id": f"attnlab-{n:02d}",
        "metadata": meta or {},
        "source": source.strip("\n"),
    }
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def notebook(cells: list[tuple[str, str, dict | None]], lang: str) -> str:
    """The notebook as nbformat 4 JSON: (kind, source, metadata) per cell, in order."""
    doc = {
        "cells": [_cell(kind, source, i, meta) for i, (kind, source, meta) in enumerate(cells)],
        "metadata": {"kernelspec": KERNEL, "language_info": {"name": "python"}, "attnlab": {"lang": lang}},
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
    }
    return json.dumps(doc, ensure_ascii=False, indent=1)


def digest(page: str, query: str) -> str:
    """A short stable id of a page and its link (the notebook's metadata names the view it rebuilds)."""
    return hashlib.sha256(f"{page}?{query}".encode()).hexdigest()[:12]
