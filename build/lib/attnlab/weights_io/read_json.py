"""Weights from our JSON: the object count bounded before parsing (attnlab.untrusted), structure and cells checked."""

from __future__ import annotations

import numpy as np

from attnlab.limits import MAX_D_MODEL, MAX_WEIGHT
from attnlab.multihead import NAMES
from attnlab.untrusted import JsonRules, is_pickle, json_kind, parse_json
from attnlab.weights_io.checks import FORMAT, SHORT_CHARS, WeightsError, cell, check_shapes, clip, pick

# Commas and brackets a JSON file may hold: twice what four of the largest matrices need, so json.loads
# builds at most this many Python objects whatever the file's shape.
JSON_TOKENS = 2 * len(NAMES) * (MAX_D_MODEL + 1) ** 2
JSON_RULES = JsonRules(JSON_TOKENS, commas=True, bom=True)  # UTF-8, a leading BOM allowed


def _json_shape(name: str, rows: object) -> tuple[int, int]:
    """The declared shape of a JSON matrix: a list of rows, each a list, all as long as the first."""
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise WeightsError("not_matrix", name=name, detail=f"{name} is {json_kind(rows)}")
    width = len(rows[0]) if rows else 0
    for r, row in enumerate(rows):
        if len(row) != width:
            raise WeightsError("ragged", name=name, row=f"{name}[{r}]", got=len(row), want=width)
    return len(rows), width


def _json_cell(name: str, r: int, c: int, value: object) -> float:
    """One cell as a float: only JSON numbers pass (never true/false); an int too large to convert is too large."""
    if type(value) is float:
        return value
    if type(value) is not int:
        raise WeightsError("not_number", f"found {json_kind(value)}", cell=cell(name, (r, c)))
    if abs(value) > MAX_WEIGHT:
        raise WeightsError("too_large", cell=cell(name, (r, c)), cap=f"{MAX_WEIGHT:g}")
    return float(value)


def _check_format(doc: dict[str, object]) -> None:
    """An optional "format" key must name this format: another version may mean other matrices."""
    if "format" in doc and doc["format"] != FORMAT:
        raise WeightsError("format", found=clip(doc["format"], SHORT_CHARS), expected=FORMAT)


def _check_d_model(doc: dict[str, object], d: int) -> None:
    """An optional "d_model" key must agree with the matrices, or which one is right is unclear."""
    declared = doc.get("d_model", d)
    if type(declared) is not int or declared != d:
        raise WeightsError("d_model_mismatch", declared=clip(declared, SHORT_CHARS), d=d)


def read_json(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from our JSON: structure and shapes checked on the parsed lists, each cell's type before any array."""
    if is_pickle(data):
        raise WeightsError("pickle_refused")
    doc = parse_json(data, JSON_RULES)
    if not isinstance(doc, dict):
        raise WeightsError("json_not_object", detail=f"the top level is {json_kind(doc)}")
    _check_format(doc)
    found = pick(doc.items())
    d = check_shapes({name: _json_shape(name, rows) for name, rows in found.items()})
    _check_d_model(doc, d)
    return {
        name: np.array(
            [[_json_cell(name, r, c, value) for c, value in enumerate(row)] for r, row in enumerate(rows)],
            dtype=np.float64,
        )
        for name, rows in found.items()
    }
