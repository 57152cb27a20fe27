"""Save and load the four projections: JSON, NumPy .npz (never pickled) or safetensors.

Everything a visitor uploads is untrusted: pickles are refused outright (loading one runs
code), sizes are capped before parsing, and every value must be a finite, moderate number.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile

import numpy as np
import torch

from attnlab.limits import MAX_D_MODEL, MAX_UPLOAD_BYTES, MAX_WEIGHT
from attnlab.multihead import NAMES, MultiHeadWeights

MAX_BYTES = MAX_UPLOAD_BYTES
MAX_ABS = MAX_WEIGHT
FORMAT = "attnlab-weights/1"
PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib")
SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16}


class WeightsError(ValueError):
    """An upload that cannot be used; `reason` is a locale key, `fmt` fills its fields."""

    def __init__(self, reason: str, **fmt: object) -> None:
        super().__init__(reason)
        self.reason, self.fmt = reason, fmt


def to_json(weights: MultiHeadWeights) -> bytes:
    """The weights as readable JSON: {"format", "d_model", "w_q": [[...]], ...}."""
    doc = {"format": FORMAT, "d_model": weights.d_model}
    doc.update({name: m.tolist() for name, m in weights.as_dict().items()})
    return json.dumps(doc).encode()


def _looks_pickled(name: str, data: bytes) -> bool:
    """Pickle files by name, or by their first byte (protocol 2+ starts with 0x80)."""
    return name.lower().endswith(PICKLE_SUFFIXES) or data[:1] == b"\x80"


def _from_json(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from our JSON (keys w_q..w_o, upper case accepted)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise WeightsError("malformed", detail=str(err)[:80]) from None
    if not isinstance(doc, dict):
        raise WeightsError("malformed", detail="top level is not an object")
    found = {k.lower(): v for k, v in doc.items()}
    mats = {}
    for name in NAMES:
        if name not in found:
            raise WeightsError("missing", name=name)
        try:
            mats[name] = np.array(found[name], dtype=np.float64)
        except (TypeError, ValueError):
            raise WeightsError("not_numbers", name=name) from None
    return mats


def _from_npz(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from a .npz archive, loaded with allow_pickle=False."""
    if not data.startswith(b"PK"):
        raise WeightsError("malformed", detail="not a .npz (zip) archive")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            found = {k.lower(): archive[k] for k in archive.files}
    except ValueError as err:
        if "pickle" in str(err).lower():
            raise WeightsError("pickle_refused") from None
        raise WeightsError("malformed", detail=str(err)[:80]) from None
    except (OSError, zipfile.BadZipFile, EOFError) as err:
        raise WeightsError("malformed", detail=str(err)[:80]) from None
    return _pick(found)


def _from_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from a safetensors file: an 8-byte header length, a JSON header, raw little-endian data."""
    if len(data) < 8:
        raise WeightsError("malformed", detail="shorter than a safetensors header")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise WeightsError("malformed", detail="header longer than the file")
    try:
        header = json.loads(data[8 : 8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise WeightsError("malformed", detail=str(err)[:80]) from None
    body = data[8 + n :]
    found = {}
    for key, info in header.items():
        if key == "__metadata__" or key.lower() not in NAMES:
            continue
        dtype = SAFETENSORS_DTYPES.get(info.get("dtype"))
        if dtype is None:
            raise WeightsError("dtype", name=key, dtype=str(info.get("dtype")))
        start, end = info["data_offsets"]
        shape = tuple(info["shape"])
        if not 0 <= start <= end <= len(body) or end - start != math.prod(shape) * np.dtype(dtype).itemsize:
            raise WeightsError("malformed", detail=f"{key}: offsets do not match its shape")
        found[key.lower()] = np.frombuffer(body[start:end], dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
    return _pick(found)


def _pick(found: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The four projections from a name -> array mapping, as float64."""
    missing = [name for name in NAMES if name not in found]
    if missing:
        raise WeightsError("missing", name=", ".join(missing))
    return {name: np.asarray(found[name], dtype=np.float64) for name in NAMES}


def _validate(mats: dict[str, np.ndarray]) -> MultiHeadWeights:
    """Square, equal, small enough, finite and moderate: or a WeightsError saying which is not."""
    d = mats["w_q"].shape[0] if mats["w_q"].ndim == 2 else -1
    for name, m in mats.items():
        if m.ndim != 2 or m.shape != (d, d):
            raise WeightsError("shape", name=name, shape=str(tuple(m.shape)), d=d)
    if not 2 <= d <= MAX_D_MODEL:
        raise WeightsError("size", d=d, cap=MAX_D_MODEL)
    for name, m in mats.items():
        if not np.isfinite(m).all():
            raise WeightsError("not_finite", name=name)
        if np.abs(m).max() > MAX_ABS:
            raise WeightsError("too_large", name=name, cap=f"{MAX_ABS:g}")
    return MultiHeadWeights(**{name: torch.tensor(m, dtype=torch.float64) for name, m in mats.items()})


def load_weights(name: str, data: bytes) -> MultiHeadWeights:
    """Parse an uploaded weights file by its extension; refuse pickles, oversize and bad values."""
    if len(data) > MAX_BYTES:
        raise WeightsError("too_big", size=len(data), cap=MAX_BYTES)
    if _looks_pickled(name, data):
        raise WeightsError("pickle_refused")
    lower = name.lower()
    if lower.endswith(".json"):
        mats = _from_json(data)
    elif lower.endswith(".npz"):
        mats = _from_npz(data)
    elif lower.endswith(".safetensors"):
        mats = _from_safetensors(data)
    else:
        raise WeightsError("extension", name=name)
    return _validate(mats)


def edits_between(base: MultiHeadWeights, target: MultiHeadWeights) -> dict[tuple[str, int, int], float]:
    """The cells where `target` differs from `base`, as Playground overrides."""
    edits = {}
    for name in NAMES:
        diff = (getattr(target, name) != getattr(base, name)).nonzero().tolist()
        edits.update({(name, r, c): float(getattr(target, name)[r, c]) for r, c in diff})
    return edits
