"""Save and load the four projections: JSON, NumPy .npz (never pickled) or safetensors.

Everything a visitor uploads is untrusted, so each reader follows the same order: check what the
file declares (names, dtypes, shapes, member sizes) against the caps, and only then read exactly
the bytes those declarations allow. Memory is bounded by the upload cap, never by what a file
claims; a member or tensor that is not one of the four projections is never read or decompressed.
Pickles are refused outright (loading one runs code) and never unpickled, not even to look.

Values: every real number loads (float64/32/16, bfloat16 and integers, all exact in float64 within
MAX_WEIGHT); anything else (bool, complex, text, objects) is refused rather than cast.

Every refusal is a WeightsError: `reason` picks the sentence `lab.upload_<reason>` in the user's
language, `fmt` fills its fields, `detail` carries a library's own English words (or None), to be
shown apart from the sentence.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple, TypeVar

import numpy as np
import torch

from attnlab.limits import MAX_D_MODEL, MAX_UPLOAD_BYTES, MAX_WEIGHT, MIN_D_MODEL
from attnlab.multihead import NAMES, MultiHeadWeights

FORMAT = "attnlab-weights/1"
PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib")
PICKLE_PROTOCOLS = (2, 3, 4, 5)  # a pickle of protocol 2+ starts with 0x80 and its protocol byte
# Commas and brackets a JSON file may hold: twice what four of the largest matrices need, so json.loads
# builds at most this many Python objects whatever the file's shape.
JSON_TOKENS = 2 * len(NAMES) * (MAX_D_MODEL + 1) ** 2
MAX_MEMBERS = 64  # .npz members listed in one archive: zipfile builds an entry for each before anything is read
NPY_HEADER_BYTES = 4096  # a .npy header numpy writes for a matrix is 118 bytes; numpy itself allows 10 000
DETAIL_CHARS = 200
SHORT_CHARS = 40

# Real-number dtypes, by .npy descr (kind + itemsize, any byte order) and by safetensors name.
NPY_DTYPES = {f"{kind}{size}" for kind in "iu" for size in (1, 2, 4, 8)} | {"f2", "f4", "f8"}
SAFETENSORS_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",  # numpy has no bfloat16: read the 16 bits, widen them to float32 exactly
    **{f"I{8 * n}": f"<i{n}" for n in (1, 2, 4, 8)},
    **{f"U{8 * n}": f"<u{n}" for n in (1, 2, 4, 8)},
}

# A .npy header is a Python dict literal; a plain array's is matched exactly (possessive, so no backtracking).
_NPY_VALUE = r"'[^'\\]{0,40}'|True|False|\(\s*+(?:\d{1,9}+\s*+,\s*+){0,8}+(?:\d{1,9}+\s*+)?+\)"
_NPY_FIELD = rf"\s*+'(descr|fortran_order|shape)'\s*+:\s*+({_NPY_VALUE})\s*+"
_NPY_HEADER = re.compile(rf"\{{{_NPY_FIELD},{_NPY_FIELD},{_NPY_FIELD},?+\s*+\}}\s*+")
_NPY_FIELDS = re.compile(_NPY_FIELD)
_NPY_DESCR = re.compile(r"[<>|=]?([a-zA-Z])(\d{0,2})")
_DTYPE_NAME = re.compile(r"\w{1,16}")

T = TypeVar("T")


class WeightsError(ValueError):
    """An upload that cannot be used: `reason` is a locale key suffix, `fmt` its fields, `detail` a library's words."""

    def __init__(self, reason: str, detail: str | None = None, **fmt: object) -> None:
        self.reason, self.fmt = reason, fmt
        self.detail = _clip(detail, DETAIL_CHARS) if detail is not None else None
        super().__init__(reason if self.detail is None else f"{reason}: {self.detail}")


def to_json(weights: MultiHeadWeights) -> bytes:
    """The weights as readable JSON: {"format", "d_model", "w_q": [[...]], ...}."""
    doc = {"format": FORMAT, "d_model": weights.d_model}
    doc.update({name: m.tolist() for name, m in weights.as_dict().items()})
    return json.dumps(doc).encode()


def load_weights(name: str, data: bytes) -> MultiHeadWeights:
    """Parse an uploaded weights file by its extension; anything unusable is a WeightsError, nothing else escapes."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise WeightsError("too_big", size=len(data), cap=MAX_UPLOAD_BYTES)
    lower = name.lower()
    if lower.endswith(PICKLE_SUFFIXES):
        raise WeightsError("pickle_refused")
    readers = {".json": _from_json, ".npz": _from_npz, ".safetensors": _from_safetensors}
    reader = next((read for suffix, read in readers.items() if lower.endswith(suffix)), None)
    if reader is None:
        raise WeightsError("extension", name=_clip(name, SHORT_CHARS))
    mats = reader(data)
    for matrix, values in mats.items():
        _check_values(matrix, values)
    return MultiHeadWeights(**{matrix: torch.from_numpy(values) for matrix, values in mats.items()})


def edits_between(base: MultiHeadWeights, target: MultiHeadWeights) -> dict[tuple[str, int, int], float]:
    """The cells where `target` differs from `base`, as Playground overrides."""
    edits = {}
    for name in NAMES:
        diff = (getattr(target, name) != getattr(base, name)).nonzero().tolist()
        edits.update({(name, r, c): float(getattr(target, name)[r, c]) for r, c in diff})
    return edits


# --- shared checks ---------------------------------------------------------------------------------------


def _clip(text: object, limit: int) -> str:
    """Outside or library text cut to `limit` characters, on one line, encodable (no lone surrogates)."""
    flat = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _is_pickle(data: bytes) -> bool:
    """A pickle of protocol 2 or later: what torch.save, joblib and pickle.dumps write."""
    return len(data) >= 2 and data[0] == 0x80 and data[1] in PICKLE_PROTOCOLS


def _unreadable(data: bytes, reason: str, detail: str | None = None, **fmt: object) -> WeightsError:
    """The refusal for a file that is not valid in its declared format: a pickle is named as one."""
    return WeightsError("pickle_refused") if _is_pickle(data) else WeightsError(reason, detail, **fmt)


def _weight_name(key: str) -> str | None:
    """Which projection a key names (w_q..w_o, any case, ASCII only), or None for any other key."""
    lower = key.lower()
    return lower if key.isascii() and lower in NAMES else None


def _pick(entries: Iterable[tuple[str, T]]) -> dict[str, T]:
    """The four projections from (key, value) pairs; other keys are ignored, a repeated or missing one refused."""
    found: dict[str, T] = {}
    for key, value in entries:
        name = _weight_name(key)
        if name in found:
            raise WeightsError("duplicate", name=name)
        if name is not None:
            found[name] = value
    missing = [name for name in NAMES if name not in found]
    if missing:
        raise WeightsError("missing", name=", ".join(missing))
    return {name: found[name] for name in NAMES}


def _shape_text(shape: tuple[int, ...]) -> str:
    """A declared shape for a message, short even when a file declares absurd sizes."""
    return _clip(" × ".join(str(n) for n in shape) or "()", SHORT_CHARS)


def _check_shapes(shapes: dict[str, tuple[int, ...]]) -> int:
    """d_model from the declared shapes, before any data is read: all square, all equal, within the caps."""
    for name, shape in shapes.items():
        if len(shape) != 2 or shape[0] != shape[1]:
            raise WeightsError("not_square", name=name, shape=_shape_text(shape))
    d = shapes["w_q"][0]
    if not MIN_D_MODEL <= d <= MAX_D_MODEL:
        raise WeightsError("size", d=_clip(d, SHORT_CHARS), min=MIN_D_MODEL, cap=MAX_D_MODEL)
    for name, shape in shapes.items():
        if shape[0] != d:
            raise WeightsError("shape", name=name, shape=_shape_text(shape), d=d)
    return d


def _cell(name: str, index: Iterable[int]) -> str:
    """A cell as the editor names it: w_q[row, col]."""
    row, col = (int(i) for i in index)
    return f"{name}[{row}, {col}]"


def _check_values(name: str, m: np.ndarray) -> None:
    """Every value finite and no larger than MAX_WEIGHT in size; the first cell that is not is named."""
    bad = np.argwhere(~np.isfinite(m))
    if len(bad):
        raise WeightsError("not_finite", cell=_cell(name, bad[0]))
    big = np.argwhere(np.abs(m) > MAX_WEIGHT)
    if len(big):
        raise WeightsError("too_large", cell=_cell(name, big[0]), cap=f"{MAX_WEIGHT:g}")


# --- JSON ------------------------------------------------------------------------------------------------


def _json_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object as a dict, refusing a repeated key (json would silently keep the last one)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        key = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        raise WeightsError("json_duplicate_key", key=_clip(key, SHORT_CHARS))
    return obj


def _parse_json(raw: bytes | memoryview) -> object:
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


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's own words, for a refusal's detail."""
    kinds = {bool: "true/false", str: "a string", type(None): "null", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def _json_shape(name: str, rows: object) -> tuple[int, int]:
    """The declared shape of a JSON matrix: a list of rows, each a list, all as long as the first."""
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise WeightsError("not_matrix", name=name, detail=f"{name} is {_json_kind(rows)}")
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
        raise WeightsError("not_number", f"found {_json_kind(value)}", cell=_cell(name, (r, c)))
    if abs(value) > MAX_WEIGHT:
        raise WeightsError("too_large", cell=_cell(name, (r, c)), cap=f"{MAX_WEIGHT:g}")
    return float(value)


def _check_format(doc: dict[str, object]) -> None:
    """An optional "format" key must name this format: another version may mean other matrices."""
    if "format" in doc and doc["format"] != FORMAT:
        raise WeightsError("format", found=_clip(doc["format"], SHORT_CHARS), expected=FORMAT)


def _check_d_model(doc: dict[str, object], d: int) -> None:
    """An optional "d_model" key must agree with the matrices, or which one is right is unclear."""
    declared = doc.get("d_model", d)
    if type(declared) is not int or declared != d:
        raise WeightsError("d_model_mismatch", declared=_clip(declared, SHORT_CHARS), d=d)


def _from_json(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from our JSON: structure and shapes checked on the parsed lists, each cell's type before any array."""
    if _is_pickle(data):
        raise WeightsError("pickle_refused")
    doc = _parse_json(data)
    if not isinstance(doc, dict):
        raise WeightsError("json_not_object", detail=f"the top level is {_json_kind(doc)}")
    _check_format(doc)
    found = _pick(doc.items())
    d = _check_shapes({name: _json_shape(name, rows) for name, rows in found.items()})
    _check_d_model(doc, d)
    return {
        name: np.array(
            [[_json_cell(name, r, c, value) for c, value in enumerate(row)] for r, row in enumerate(rows)],
            dtype=np.float64,
        )
        for name, rows in found.items()
    }


# --- .npz ------------------------------------------------------------------------------------------------

_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, struct.error, NotImplementedError)


class NpyHeader(NamedTuple):
    """What a .npy member declares: where its data starts, its shape, dtype and memory order."""

    offset: int
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool


def _member_key(filename: str) -> str:
    """An archive member's array name, as np.load gives it: the file name without ".npy"."""
    return filename[:-4] if filename.lower().endswith(".npy") else filename


def _npy_dtype(name: str, descr: str) -> np.dtype:
    """A .npy descr as a real-number dtype; object arrays are pickles, anything else not a number is refused."""
    match = _NPY_DESCR.fullmatch(descr)
    if match and match[1] == "O":
        raise WeightsError("pickle_refused")
    if not match or f"{match[1]}{match[2]}" not in NPY_DTYPES:
        raise WeightsError("dtype", name=name, dtype=_clip(descr, SHORT_CHARS), allowed=", ".join(sorted(NPY_DTYPES)))
    return np.dtype(descr)


def _npy_header(name: str, head: bytes) -> NpyHeader:
    """A .npy member's header, parsed from its first bytes without evaluating its text.

    numpy's own reader feeds the header to ast.literal_eval, which raises TypeError, IndexError or
    MemoryError on crafted headers; a plain array's header is one dict literal, matched here exactly.
    """
    prefix = np.lib.format.MAGIC_PREFIX
    if not head.startswith(prefix) or len(head) < len(prefix) + 4:
        raise _unreadable(head, "npy_header", "not a .npy array (no NumPy magic string)", name=name)
    major = head[len(prefix)]
    size_format = "<H" if major == 1 else "<I"
    start = len(prefix) + 2 + struct.calcsize(size_format)
    length = int.from_bytes(head[len(prefix) + 2 : start], "little")
    if major not in (1, 2, 3) or len(head) < start + length:
        raise WeightsError("npy_header", f"version {major}, header of {length} bytes", name=name)
    text = head[start : start + length].decode("latin-1")
    if not _NPY_HEADER.fullmatch(text):
        raise WeightsError("npy_header", f"not a plain array header: {text}", name=name)
    fields = dict(_NPY_FIELDS.findall(text))
    if len(fields) != 3:
        raise WeightsError("npy_header", f"a key is repeated: {text}", name=name)
    shape = tuple(int(n) for n in re.findall(r"\d+", fields["shape"]))
    return NpyHeader(start + length, shape, _npy_dtype(name, fields["descr"][1:-1]), fields["fortran_order"] == "True")


def _npz_header(archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo) -> NpyHeader:
    """A needed member's header, from at most its first NPY_HEADER_BYTES bytes (deflate or stored only)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise WeightsError("zip_method", name=name, method=info.compress_type)
    if info.flag_bits & 0x1:
        raise WeightsError("zip_unreadable", f"{info.filename} is encrypted")
    with archive.open(info) as member:
        return _npy_header(name, member.read(NPY_HEADER_BYTES))


def _npz_array(archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo, header: NpyHeader, d: int) -> np.ndarray:
    """Exactly the d*d values a checked header declares, once the archive's own size for them agrees."""
    nbytes = d * d * header.dtype.itemsize
    if info.file_size != header.offset + nbytes:
        raise WeightsError("data_size", name=name, declared=info.file_size, expected=header.offset + nbytes)
    with archive.open(info) as member:
        member.read(header.offset)
        raw = member.read(nbytes)  # reaches the member's end, so zipfile checks its CRC
    if len(raw) != nbytes:
        raise WeightsError("zip_unreadable", f"{info.filename} ends after {len(raw)} of {nbytes} bytes")
    values = np.frombuffer(raw, dtype=header.dtype).reshape((d, d), order="F" if header.fortran else "C")
    return values.astype(np.float64, order="C")


def _from_npz(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from a .npz: names and sizes from the central directory, each needed member's header, then its data.

    Members other than w_q..w_o are ignored and never decompressed: the central directory lists them
    without reading them, and ignoring them keeps files that also carry biases or notes loadable.
    """
    members = data.count(b"PK\x01\x02")  # central directory entries (an upper bound: the signature may recur)
    if members > MAX_MEMBERS:
        raise WeightsError("zip_members", count=members, cap=MAX_MEMBERS)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            found = _pick((_member_key(info.filename), info) for info in archive.infolist())
            headers = {name: _npz_header(archive, name, info) for name, info in found.items()}
            d = _check_shapes({name: header.shape for name, header in headers.items()})
            return {name: _npz_array(archive, name, found[name], headers[name], d) for name in NAMES}
    except WeightsError:
        raise
    except _ZIP_ERRORS as err:
        raise _unreadable(data, "zip_unreadable", f"{type(err).__name__}: {err}") from None


# --- safetensors ------------------------------------------------------------------------------------------


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
            "st_offsets", name=name, start=_clip(start, SHORT_CHARS), end=_clip(end, SHORT_CHARS), size=len(body)
        )
    if end - start != d * d * dtype.itemsize:
        raise WeightsError("data_size", name=name, declared=end - start, expected=d * d * dtype.itemsize)
    values = np.frombuffer(body, dtype=dtype, count=d * d, offset=start).reshape(d, d)
    if entry.kind == "BF16":
        values = (values.astype("<u4") << 16).view("<f4")  # bfloat16 is the top half of a float32
    return values.astype(np.float64, order="C")


def _from_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from safetensors: an 8-byte header length, a JSON header of tensor entries, raw little-endian data.

    Tensors other than w_q..w_o are ignored (their entries must still be objects) and never read.
    """
    length = int.from_bytes(data[:8], "little")
    if len(data) < 8 or not 2 <= length <= len(data) - 8:
        raise _unreadable(data, "st_length", declared=length, available=max(len(data) - 8, 0))
    header = _parse_json(memoryview(data)[8 : 8 + length])
    if not isinstance(header, dict):
        raise WeightsError("st_header", f"the header is {_json_kind(header)}, not an object")
    odd = next((key for key, entry in header.items() if not isinstance(entry, dict)), None)
    if odd is not None:
        raise WeightsError("st_header", f"entry {odd!r} is {_json_kind(header[odd])}, not an object")
    entries = {name: _st_entry(name, entry) for name, entry in _pick(header.items()).items()}
    d = _check_shapes({name: entry.shape for name, entry in entries.items()})
    body = memoryview(data)[8 + length :]
    return {name: _st_array(name, entry, body, d) for name, entry in entries.items()}
