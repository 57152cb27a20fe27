"""What every weights reader shares: the refusal, the caps, and the checks of names, shapes and values.

The bytes themselves (JSON, pickles, safetensors headers) are read by `attnlab.untrusted`; `refused` turns
its refusals into this package's WeightsErrors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import numpy as np

from attnlab.limits import MAX_D_MODEL, MAX_WEIGHT, MIN_D_MODEL
from attnlab.multihead import NAMES
from attnlab.untrusted import DETAIL_CHARS, SHORT_CHARS, Refusal, clip, pickled

FORMAT = "attnlab-weights/1"

T = TypeVar("T")


class WeightsError(ValueError):
    """An upload that cannot be used: `reason` is a locale key suffix, `fmt` its fields, `detail` a library's words."""

    def __init__(self, reason: str, detail: str | None = None, **fmt: object) -> None:
        self.reason, self.fmt = reason, fmt
        self.detail = clip(detail, DETAIL_CHARS) if detail is not None else None
        super().__init__(reason if self.detail is None else f"{reason}: {self.detail}")


def unreadable(data: bytes, reason: str, detail: str | None = None, **fmt: object) -> WeightsError:
    """The refusal for a file that is not valid in its declared format: a pickle (of either kind) is named as one."""
    return WeightsError("pickle_refused") if pickled(data) else WeightsError(reason, detail, **fmt)


def refused(err: Refusal, data: bytes) -> WeightsError:
    """The WeightsError for a refusal of `attnlab.untrusted`: this package's reason, fields and detail."""
    f, detail = err.fmt, err.detail
    match err.reason:
        case "json_encoding":
            return WeightsError("json_encoding", detail)
        case "json_too_many":
            return WeightsError("json_too_many_values", count=f["count"], cap=f["cap"])
        case "json_syntax":
            return WeightsError("json_syntax", detail, line=f["line"], col=f["col"])
        case "json_too_deep":
            return WeightsError("json_too_deep", detail)
        case "json_number_too_long":
            return WeightsError("json_number_too_long", detail)
        case "json_duplicate_key":
            return WeightsError("json_duplicate_key", key=f["key"])
        case "st_length" | "st_too_big":  # st_too_big: this package sets no header cap beyond the upload's
            declared = f.get("declared", f.get("size"))
            return unreadable(data, "st_length", declared=declared, available=max(len(data) - 8, 0))
        case "st_not_object":
            return WeightsError("st_header", detail)
        case "st_dtype":
            return WeightsError("dtype", name=f["name"], dtype=f["dtype"], allowed=f["allowed"])
        case "st_entry" | "st_rank":  # st_rank: this package asks for no rank (check_shapes names the shape)
            return WeightsError("st_entry", name=f["name"], field=f.get("field", "shape"))
        case "st_offsets":
            return WeightsError("st_offsets", name=f["name"], start=f["start"], end=f["end"], size=f["size"])
        case "st_data_size":
            return WeightsError("data_size", name=f["name"], declared=f["declared"], expected=f["expected"])
    raise AssertionError(f"no WeightsError for the refusal {err.reason!r}")


def weight_name(key: str) -> str | None:
    """Which projection a key names (w_q..w_o, any case, ASCII only), or None for any other key."""
    lower = key.lower()
    return lower if key.isascii() and lower in NAMES else None


def pick(entries: Iterable[tuple[str, T]]) -> dict[str, T]:
    """The four projections from (key, value) pairs; other keys are ignored, a repeated or missing one refused."""
    found: dict[str, T] = {}
    for key, value in entries:
        name = weight_name(key)
        if name in found:
            raise WeightsError("duplicate", name=name)
        if name is not None:
            found[name] = value
    missing = [name for name in NAMES if name not in found]
    if missing:
        raise WeightsError("missing", name=", ".join(missing))
    return {name: found[name] for name in NAMES}


def shape_text(shape: tuple[int, ...]) -> str:
    """A declared shape for a message, short even when a file declares absurd sizes."""
    return clip(" × ".join(str(n) for n in shape) or "()", SHORT_CHARS)


def check_shapes(shapes: dict[str, tuple[int, ...]]) -> int:
    """d_model from the declared shapes, before any data is read: W_Q and W_O square and equal, within the caps;
    W_K and W_V (d_model, d_kv) alike, d_kv dividing d_model (narrower when key/value heads are shared)."""
    for name, shape in shapes.items():
        if len(shape) != 2 or (name in ("w_q", "w_o") and shape[0] != shape[1]):
            raise WeightsError("not_square", name=name, shape=shape_text(shape))
    d = shapes["w_q"][0]
    if not MIN_D_MODEL <= d <= MAX_D_MODEL:
        raise WeightsError("size", d=clip(d, SHORT_CHARS), min=MIN_D_MODEL, cap=MAX_D_MODEL)
    for name, shape in shapes.items():
        if shape[0] != d or (name == "w_o" and shape[1] != d):
            raise WeightsError("shape", name=name, shape=shape_text(shape), d=d)
    d_kv = shapes["w_k"][1]
    for name in ("w_k", "w_v"):
        if shapes[name][1] != d_kv or not 1 <= d_kv <= d or d % d_kv:
            raise WeightsError("kv_shape", name=name, shape=shape_text(shapes[name]), d=d)
    return d


def cell(name: str, index: Iterable[int]) -> str:
    """A cell as the editor names it: w_q[row, col]."""
    row, col = (int(i) for i in index)
    return f"{name}[{row}, {col}]"


def check_values(name: str, m: np.ndarray) -> None:
    """Every value finite and no larger than MAX_WEIGHT in size; the first cell that is not is named."""
    bad = np.argwhere(~np.isfinite(m))
    if len(bad):
        raise WeightsError("not_finite", cell=cell(name, bad[0]))
    big = np.argwhere(np.abs(m) > MAX_WEIGHT)
    if len(big):
        raise WeightsError("too_large", cell=cell(name, big[0]), cap=f"{MAX_WEIGHT:g}")
