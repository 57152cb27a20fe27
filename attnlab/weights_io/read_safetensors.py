"""Weights from safetensors: an 8-byte header length, a JSON header of tensor entries, raw little-endian data."""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from attnlab.weights_io.checks import SHORT_CHARS, WeightsError, check_shapes, clip, pick, unreadable
from attnlab.weights_io.read_json import json_kind, parse_json

# Real-number dtypes by safetensors name.
SAFETENSORS_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",  # numpy has no bfloat16: read the 16 bits, widen them to float32 exactly
    **{f"I{8 * n}": f"<i{n}" for n in (1, 2, 4, 8)},
    **{f"U{8 * n}": f"<u{n}" for n in (1, 2, 4, 8)},
}
_DTYPE_NAME = re.compile(r"\w{1,16}")


class TensorEntry(NamedTuple):
    """What a safetensors header declares for one tensor."""

    kind: str
    shape: tuple[int, ...]
    offsets: tuple[int, int]


def _count_list(value: object, length: int | None = None) -> bool:
    """A JSON list of non-negative integers (true/false excluded), of `length` items when given."""
    return (
        isinstance(value, list)
        and (length is None or len(value) == length)
        and all(type(n) is int and n >= 0 for n in value)
    )


def _st_entry(name: str, entry: dict[str, object]) -> TensorEntry:
    """One tensor's dtype, shape and data_offsets, each checked for type before it is used."""
    kind, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(kind, str) or not _DTYPE_NAME.fullmatch(kind):
        raise WeightsError("st_entry", name=name, field="dtype")
    if kind not in SAFETENSORS_DTYPES:
        raise WeightsError("dtype", name=name, dtype=kind, allowed=", ".join(SAFETENSORS_DTYPES))
    if not _count_list(shape):
        raise WeightsError("st_entry", name=name, field="shape")
    if not _count_list(offsets, 2):
        raise WeightsError("st_entry", name=name, field="data_offsets")
    return TensorEntry(kind, tuple(shape), (offsets[0], offsets[1]))


def _st_array(name: str, entry: TensorEntry, body: memoryview, d: int) -> np.ndarray:
    """Exactly the d*d values a checked entry declares, once its offsets lie inside the body and fit the shape."""
    dtype = np.dtype(SAFETENSORS_DTYPES[entry.kind])
    start, end = entry.offsets
    if not start <= end <= len(body):
        raise WeightsError(
            "st_offsets", name=name, start=clip(start, SHORT_CHARS), end=clip(end, SHORT_CHARS), size=len(body)
        )
    if end - start != d * d * dtype.itemsize:
        raise WeightsError("data_size", name=name, declared=end - start, expected=d * d * dtype.itemsize)
    values = np.frombuffer(body, dtype=dtype, count=d * d, offset=start).reshape(d, d)
    if entry.kind == "BF16":
        values = (values.astype("<u4") << 16).view("<f4")  # bfloat16 is the top half of a float32
    return values.astype(np.float64, order="C")


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from safetensors: an 8-byte header length, a JSON header of tensor entries, raw little-endian data.

    Tensors other than w_q..w_o are ignored (their entries must still be objects) and never read.
    """
    length = int.from_bytes(data[:8], "little")
    if len(data) < 8 or not 2 <= length <= len(data) - 8:
        raise unreadable(data, "st_length", declared=length, available=max(len(data) - 8, 0))
    header = parse_json(memoryview(data)[8 : 8 + length])
    if not isinstance(header, dict):
        raise WeightsError("st_header", f"the header is {json_kind(header)}, not an object")
    odd = next((key for key, entry in header.items() if not isinstance(entry, dict)), None)
    if odd is not None:
        raise WeightsError("st_header", f"entry {odd!r} is {json_kind(header[odd])}, not an object")
    entries = {name: _st_entry(name, entry) for name, entry in pick(header.items()).items()}
    d = check_shapes({name: entry.shape for name, entry in entries.items()})
    body = memoryview(data)[8 + length :]
    return {name: _st_array(name, entry, body, d) for name, entry in entries.items()}
