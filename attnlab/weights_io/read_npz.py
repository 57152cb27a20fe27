"""Weights from a NumPy .npz, never unpickled: central directory, each needed member's header, then its data."""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from typing import NamedTuple

import numpy as np

from attnlab.limits import MAX_NPY_HEADER_BYTES, MAX_NPZ_MEMBERS
from attnlab.multihead import NAMES
from attnlab.weights_io.checks import SHORT_CHARS, WeightsError, check_shapes, clip, pick, unreadable

# Real-number dtypes by .npy descr (kind + itemsize, any byte order).
NPY_DTYPES = {f"{kind}{size}" for kind in "iu" for size in (1, 2, 4, 8)} | {"f2", "f4", "f8"}

# A .npy header is a Python dict literal; a plain array's is matched exactly (possessive, so no backtracking).
_NPY_VALUE = r"'[^'\\]{0,40}'|True|False|\(\s*+(?:\d{1,9}+\s*+,\s*+){0,8}+(?:\d{1,9}+\s*+)?+\)"
_NPY_FIELD = rf"\s*+'(descr|fortran_order|shape)'\s*+:\s*+({_NPY_VALUE})\s*+"
_NPY_HEADER = re.compile(rf"\{{{_NPY_FIELD},{_NPY_FIELD},{_NPY_FIELD},?+\s*+\}}\s*+")
_NPY_FIELDS = re.compile(_NPY_FIELD)
_NPY_DESCR = re.compile(r"[<>|=]?([a-zA-Z])(\d{0,2})")
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
        raise WeightsError("dtype", name=name, dtype=clip(descr, SHORT_CHARS), allowed=", ".join(sorted(NPY_DTYPES)))
    return np.dtype(descr)


def _npy_header(name: str, head: bytes) -> NpyHeader:
    """A .npy member's header, parsed from its first bytes without evaluating its text.

    numpy's own reader feeds the header to ast.literal_eval, which raises TypeError, IndexError or
    MemoryError on crafted headers; a plain array's header is one dict literal, matched here exactly.
    """
    prefix = np.lib.format.MAGIC_PREFIX
    if not head.startswith(prefix) or len(head) < len(prefix) + 4:
        raise unreadable(head, "npy_header", "not a .npy array (no NumPy magic string)", name=name)
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
    """A needed member's header, from at most its first MAX_NPY_HEADER_BYTES bytes (deflate or stored only)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise WeightsError("zip_method", name=name, method=info.compress_type)
    if info.flag_bits & 0x1:
        raise WeightsError("zip_unreadable", f"{info.filename} is encrypted")
    with archive.open(info) as member:
        return _npy_header(name, member.read(MAX_NPY_HEADER_BYTES))


def _npz_array(archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo, header: NpyHeader) -> np.ndarray:
    """Exactly the rows x cols values a checked header declares, once the archive's own size for them agrees."""
    rows, cols = header.shape
    nbytes = rows * cols * header.dtype.itemsize
    if info.file_size != header.offset + nbytes:
        raise WeightsError("data_size", name=name, declared=info.file_size, expected=header.offset + nbytes)
    with archive.open(info) as member:
        member.read(header.offset)
        raw = member.read(nbytes)  # reaches the member's end, so zipfile checks its CRC
    if len(raw) != nbytes:
        raise WeightsError("zip_unreadable", f"{info.filename} ends after {len(raw)} of {nbytes} bytes")
    values = np.frombuffer(raw, dtype=header.dtype).reshape((rows, cols), order="F" if header.fortran else "C")
    return values.astype(np.float64, order="C")


def read_npz(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from a .npz: names and sizes from the central directory, each needed member's header, then its data.

    Members other than w_q..w_o are ignored and never decompressed: the central directory lists them
    without reading them, and ignoring them keeps files that also carry biases or notes loadable.
    """
    members = data.count(b"PK\x01\x02")  # central directory entries (an upper bound: the signature may recur)
    if members > MAX_NPZ_MEMBERS:
        raise WeightsError("zip_members", count=members, cap=MAX_NPZ_MEMBERS)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            found = pick((_member_key(info.filename), info) for info in archive.infolist())
            headers = {name: _npz_header(archive, name, info) for name, info in found.items()}
            check_shapes({name: header.shape for name, header in headers.items()})
            return {name: _npz_array(archive, name, found[name], headers[name]) for name in NAMES}
    except WeightsError:
        raise
    except _ZIP_ERRORS as err:
        raise unreadable(data, "zip_unreadable", f"{type(err).__name__}: {err}") from None
