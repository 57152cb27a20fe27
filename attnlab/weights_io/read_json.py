"""Weights from our JSON: the object count bounded before parsing, structure and every cell's type checked."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from attnlab.limits import MAX_D_MODEL, MAX_WEIGHT
from attnlab.multihead import NAMES
from attnlab.weights_io.checks import FORMAT, SHORT_CHARS, WeightsError, cell, check_shapes, clip, is_pickle, pick

# Commas and brackets a JSON file may hold: twice what four of the largest matrices need, so json.loads
# builds at most this many Python objects whatever the file's shape.
JSON_TOKENS = 2 * len(NAMES) * (MAX_D_MODEL + 1) ** 2


def _json_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object as a dict, refusing a repeated key (json would silently keep the last one)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        key = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        raise WeightsError("json_duplicate_key", key=clip(key, SHORT_CHARS))
    return obj


def parse_json(raw: bytes | memoryview) -> object:
    """UTF-8 JSON (a leading BOM allowed) parsed with its object count bounded before json.loads builds any."""
    try:
        text = str(raw, "utf-8-sig")
    except UnicodeDecodeError as err:
        raise WeightsError("json_encoding", str(err)) from None
    tokens = text.count(",") + text.count("[") + text.count("{")
    if tokens > JSON_TOKENS:
        raise WeightsError("json_too_many_values", count=tokens, cap=JSON_TOKENS)
    try:
        return json.loads(text, object_pairs_hook=_json_object)
    except WeightsError:
        raise
    except json.JSONDecodeError as err:
        raise WeightsError("json_syntax", err.msg, line=err.lineno, col=err.colno) from None
    except RecursionError as err:
        raise WeightsError("json_too_deep", str(err)) from None
    except ValueError as err:  # an integer past Python's digit limit (4300 digits)
        raise WeightsError("json_number_too_long", str(err)) from None


def json_kind(value: object) -> str:
    """What a JSON value is, in JSON's own words, for a refusal's detail."""
    kinds = {bool: "true/false", str: "a string", type(None): "null", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


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
    doc = parse_json(data)
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
