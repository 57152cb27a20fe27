"""Reading untrusted bytes: bounded JSON, pickle detection, safetensors headers checked before any array is read.

Both upload readers build on this: `attnlab.weights_io` (the Playground's weights) and `attnlab.attnfile`
(attention files). Nothing here builds more than a declaration allows: a JSON text is refused on its
container count before json.loads makes a single object, and a safetensors header's length, dtypes,
shapes and offsets are checked before any tensor is read. Pickles are only recognised, never unpickled.

Every refusal is a `Refusal`: `reason` one of REASONS, `fmt` its fields, `detail` English words (or None),
`cause` the library's own exception (or None). Each reader turns it into its own error, with its own
reasons and sentences; what counts as too many, which dtypes and which rank are the reader's to say.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib")  # names only a pickle wears
SHORT_CHARS = 40  # an outside value quoted in a sentence
DETAIL_CHARS = 200  # a library's own words shown apart from the sentence
PICKLE_PROTOCOLS = (2, 3, 4, 5)  # a pickle of protocol 2+ starts with 0x80 and its protocol byte
ZIP_MAGIC = b"PK\x03\x04"  # a zip's first local file header: its name's length at bytes 26-27, the name from 30
# Every real-number dtype safetensors names, as numpy reads it (little-endian); each reader allows a subset.
ST_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",  # numpy has no bfloat16: read the 16 bits, widen them to float32 exactly (st_array)
    **{f"I{8 * n}": f"<i{n}" for n in (1, 2, 4, 8)},
    **{f"U{8 * n}": f"<u{n}" for n in (1, 2, 4, 8)},
}
REASONS = (
    "json_encoding",  # not UTF-8: detail
    "json_too_many",  # count, cap: refused before parsing
    "json_syntax",  # line, col; detail: json's message
    "json_too_deep",  # nesting past Python's recursion limit
    "json_number_too_long",  # an integer past Python's digit limit
    "json_duplicate_key",  # key
    "st_length",  # declared, available: the 8-byte header length does not fit the data
    "st_too_big",  # size, cap: a header longer than the reader allows
    "st_not_object",  # the header is not a JSON object
    "st_entry",  # name, field (entry, dtype, shape or data_offsets) is not what safetensors defines
    "st_dtype",  # name, dtype, allowed: a dtype the reader does not take
    "st_rank",  # name, shape: not the rank the reader wants
    "st_offsets",  # name, start, end, size: bytes outside the data section
    "st_data_size",  # name, declared, expected (and start, end, size): not the bytes the shape needs
)
_DTYPE_NAME = re.compile(r"\w{1,16}")


class Refusal(Exception):
    """Untrusted bytes refused: `reason` (one of REASONS), `fmt` its fields, `detail` English, `cause` the library's."""

    def __init__(
        self, reason: str, detail: str | None = None, *, cause: BaseException | None = None, **fmt: object
    ) -> None:
        self.reason, self.detail, self.cause, self.fmt = reason, detail, cause, fmt
        super().__init__(reason if detail is None else f"{reason}: {clip(detail, DETAIL_CHARS)}")


def clip(text: object, limit: int = SHORT_CHARS) -> str:
    """Outside or library text cut to `limit` characters, on one line, encodable (no lone surrogates)."""
    flat = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --- pickles ------------------------------------------------------------------------------------------------


def is_pickle(data: bytes) -> bool:
    """A pickle of protocol 2 or later: what pickle.dumps, joblib and torch.save before 1.6 write."""
    return len(data) >= 2 and data[0] == 0x80 and data[1] in PICKLE_PROTOCOLS


def is_torch_zip(data: bytes) -> bool:
    """What torch.save writes since 1.6: a zip whose first member is `<archive>/data.pkl`, a pickle.

    Only the first member's name is read: an .npz that merely mentions data.pkl in a member is not one.
    """
    if data[:4] != ZIP_MAGIC or len(data) < 30:
        return False
    name = data[30 : 30 + int.from_bytes(data[26:28], "little")]
    return name == b"data.pkl" or name.endswith(b"/data.pkl")


def framed_safetensors(data: bytes) -> bool:
    """A safetensors frame: an 8-byte little-endian header length whose JSON header opens with '{' inside the data.

    Its first two bytes are that length's low bytes: a header of 640 bytes begins 0x80 0x02, a pickle's mark.
    """
    size = int.from_bytes(data[:8], "little")
    return len(data) > 8 and 8 + size <= len(data) and data[8:9] == b"{"


def pickled(data: bytes) -> bool:
    """Either kind of pickle: loading it would run code, so it is refused, never opened. A safetensors frame is
    read as one even where it begins as a pickle does (its parser, which runs no code, judges the rest)."""
    return not framed_safetensors(data) and (is_pickle(data) or is_torch_zip(data))


# --- JSON -------------------------------------------------------------------------------------------------


class JsonRules(NamedTuple):
    """How much JSON a reader takes: at most `cap` of '[' and '{' (and ',' when `commas`); a BOM when `bom`."""

    cap: int
    commas: bool = False
    bom: bool = False


def json_kind(value: object) -> str:
    """What a JSON value is, in JSON's own words, for a refusal's detail."""
    kinds = {bool: "true/false", str: "a string", type(None): "null", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object as a dict, refusing a repeated key (json would silently keep the last one)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        key = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        raise Refusal("json_duplicate_key", key=clip(key))
    return obj


def parse_json(raw: bytes | memoryview | str, rules: JsonRules) -> object:
    """UTF-8 JSON with its containers counted (and capped) before json.loads builds anything; no repeated key."""
    try:
        text = raw if isinstance(raw, str) else str(raw, "utf-8-sig" if rules.bom else "utf-8")
    except UnicodeDecodeError as err:
        raise Refusal("json_encoding", str(err), cause=err) from None
    count = text.count("[") + text.count("{") + (text.count(",") if rules.commas else 0)
    if count > rules.cap:
        raise Refusal("json_too_many", count=count, cap=rules.cap)
    try:
        return json.loads(text, object_pairs_hook=_object)
    except Refusal:
        raise
    except json.JSONDecodeError as err:
        raise Refusal("json_syntax", err.msg, cause=err, line=err.lineno, col=err.colno) from None
    except RecursionError as err:
        raise Refusal("json_too_deep", str(err), cause=err) from None
    except ValueError as err:  # an integer past Python's digit limit (4300 digits)
        raise Refusal("json_number_too_long", str(err), cause=err) from None


# --- safetensors ------------------------------------------------------------------------------------------


class Entry(NamedTuple):
    """What a safetensors header declares for one tensor: dtype (its name and numpy's), shape, byte range."""

    kind: str
    dtype: np.dtype
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def nbytes(self) -> int:
        """The bytes its shape and dtype need (a plain int: absurd shapes cannot overflow it)."""
        return math.prod(self.shape) * self.dtype.itemsize


def st_header(
    data: bytes, rules: JsonRules, *, max_bytes: int | None = None, brace: bool = False
) -> tuple[dict[str, object], int]:
    """A safetensors header as a dict and where the data starts: its 8-byte length checked, then bounded JSON.

    `max_bytes` caps the header's length (a length that fits the data but not the cap is `st_too_big`);
    `brace` asks the header to start with '{', as the format says.
    """
    length = int.from_bytes(data[:8], "little")
    available = max(len(data) - 8, 0)
    if len(data) < 8:
        detail = f"{len(data)} bytes, shorter than a header length"
        raise Refusal("st_length", detail, declared=length, available=available)
    if max_bytes is not None and max_bytes < length <= available:
        raise Refusal("st_too_big", size=length, cap=max_bytes)
    if not 2 <= length <= available or (brace and data[8:9] != b"{"):
        detail = f"header length {clip(length)}, {len(data)} bytes in all"
        raise Refusal("st_length", detail, declared=length, available=available)
    header = parse_json(memoryview(data)[8 : 8 + length], rules)
    if not isinstance(header, dict):
        raise Refusal("st_not_object", f"the header is {json_kind(header)}, not an object")
    return header, 8 + length


def _counts(value: object, length: int | None = None) -> bool:
    """A JSON list of non-negative integers (true/false excluded), of `length` items when given."""
    return (
        isinstance(value, list)
        and (length is None or len(value) == length)
        and all(type(n) is int and n >= 0 for n in value)
    )


def st_entry(name: str, raw: object, dtypes: Mapping[str, str], rank: int | None = None) -> Entry:
    """One tensor's entry: dtype among `dtypes` (names of ST_DTYPES), shape (of `rank`), offsets, each typed."""
    if not isinstance(raw, dict):
        raise Refusal("st_entry", name=name, field="entry")
    kind, shape, offsets = raw.get("dtype"), raw.get("shape"), raw.get("data_offsets")
    allowed = ", ".join(dtypes)
    if not isinstance(kind, str) or not _DTYPE_NAME.fullmatch(kind):
        raise Refusal("st_entry", name=name, field="dtype", dtype=clip(kind), allowed=allowed)
    if kind not in dtypes:
        raise Refusal("st_dtype", name=name, dtype=clip(kind), allowed=allowed)
    if not _counts(shape):
        raise Refusal("st_entry", name=name, field="shape", shape=clip(shape))
    if rank is not None and len(shape) != rank:
        raise Refusal("st_rank", name=name, shape=clip(shape))
    if not _counts(offsets, 2):
        raise Refusal("st_entry", name=name, field="data_offsets")
    return Entry(kind, np.dtype(dtypes[kind]), tuple(shape), offsets[0], offsets[1])


def st_span(name: str, entry: Entry, size: int) -> None:
    """An entry's bytes lie inside a data section of `size` bytes and are exactly as many as its shape needs.

    Entries may share bytes (the format's writers never do it, and some files in the wild do): each one is
    read on its own, so what they cost is bounded by the reader's caps on shapes, not by the file.
    """
    where = {"name": name, "start": clip(entry.start), "end": clip(entry.end), "size": size}
    if not entry.start <= entry.end <= size:
        raise Refusal("st_offsets", **where)
    if entry.end - entry.start != entry.nbytes:
        raise Refusal("st_data_size", **where, declared=entry.end - entry.start, expected=entry.nbytes)


def st_array(data: bytes | memoryview, start: int, entry: Entry) -> np.ndarray:
    """Exactly the values a checked entry declares, its data section starting at `start`; bfloat16 as float32."""
    count = math.prod(entry.shape)
    values = np.frombuffer(data, dtype=entry.dtype, count=count, offset=start + entry.start).reshape(entry.shape)
    return (values.astype("<u4") << 16).view("<f4") if entry.kind == "BF16" else values
