"""Loading an attention file that may be hostile: the header is parsed and checked before any array is read.

Order: the upload's size; a pickle named as one; the 8-byte header length against the cap and the data;
the JSON header (its size and container count bounded before json.loads builds anything); each tensor's
dtype, rank, shape and offsets against the caps and the data; the metadata (format, kind, tokens); only
then exactly the declared bytes are read, and the values checked: finite, weights in [0, 1], every row
summing to 1 or 0, the upper triangle empty when the file says it is causal. Every refusal is an
AttentionFileError; nothing else gets out.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import NamedTuple

import numpy as np
import torch

from attnlab.attnfile.file import FORMAT, KINDS, TENSORS, AttentionFile, AttentionFileError, clip
from attnlab.limits import (
    MAX_ATTN_FILE_BYTES,
    MAX_ATTN_HEAD_DIM,
    MAX_ATTN_HEADER_BYTES,
    MAX_ATTN_HEADER_CONTAINERS,
    MAX_ATTN_HEADS,
    MAX_ATTN_MODEL_CHARS,
    MAX_ATTN_QK_ABS,
    MAX_ATTN_TOKEN_CHARS,
    MAX_ATTN_TOKENS,
    MAX_ATTN_VALUES,
    TOL_ATTN_ROW_SUM,
    TOL_ATTN_WEIGHT,
)

PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib")
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}  # bfloat16: the top half of a float32
RANKS = 4


class Entry(NamedTuple):
    """What the header declares for one tensor."""

    dtype: np.dtype
    bf16: bool
    shape: tuple[int, ...]
    start: int
    end: int


def _is_pickle(data: bytes) -> bool:
    """A pickle (protocol 2+, what pickle.dumps writes) or torch.save's zip with a data.pkl inside."""
    if len(data) >= 2 and data[0] == 0x80 and data[1] in (2, 3, 4, 5):
        return True
    return data[:4] == b"PK\x03\x04" and b"data.pkl" in data[:4096]


def _json_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object as a dict, refusing a repeated key (json would silently keep the last one)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        key = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        raise AttentionFileError("json_duplicate_key", key=clip(key))
    return obj


def _parse_json(raw: bytes | str, where: str) -> object:
    """Bounded JSON: at most MAX_ATTN_HEADER_CONTAINERS lists and objects, so json.loads builds few objects."""
    try:
        text = raw if isinstance(raw, str) else str(raw, "utf-8")
    except UnicodeDecodeError as err:
        raise AttentionFileError("bad_json", str(err), where=where) from None
    containers = text.count("[") + text.count("{")
    if containers > MAX_ATTN_HEADER_CONTAINERS:
        raise AttentionFileError("header_too_complex", count=containers, cap=MAX_ATTN_HEADER_CONTAINERS)
    try:
        return json.loads(text, object_pairs_hook=_json_object)
    except AttentionFileError:
        raise
    except (ValueError, RecursionError) as err:  # JSONDecodeError, an over-long integer, deep nesting
        raise AttentionFileError("bad_json", f"{type(err).__name__}: {err}", where=where) from None


def _header(data: bytes) -> tuple[dict[str, object], int]:
    """The safetensors header as a dict, and where the data starts."""
    if len(data) < 8:
        raise AttentionFileError("not_safetensors", f"{len(data)} bytes, shorter than a header length")
    length = int.from_bytes(data[:8], "little")
    if length > MAX_ATTN_HEADER_BYTES and length <= len(data) - 8:
        raise AttentionFileError("header_too_big", size=length, cap=MAX_ATTN_HEADER_BYTES)
    if not 2 <= length <= len(data) - 8 or data[8:9] != b"{":
        raise AttentionFileError("not_safetensors", f"header length {clip(length)}, {len(data)} bytes in all")
    header = _parse_json(data[8 : 8 + length], "header")
    if not isinstance(header, dict):
        raise AttentionFileError("not_safetensors", "the header is not a JSON object")
    return header, 8 + length


def _count_list(value: object) -> bool:
    """A JSON list of non-negative integers (true/false excluded)."""
    return isinstance(value, list) and all(type(n) is int and n >= 0 for n in value)


def _entry(name: str, raw: object) -> Entry:
    """One tensor's dtype, shape and offsets as the header declares them, each checked for type."""
    if not isinstance(raw, dict):
        raise AttentionFileError("bad_entry", name=name, field="entry")
    dtype, shape, offsets = raw.get("dtype"), raw.get("shape"), raw.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise AttentionFileError("dtype", name=name, dtype=clip(dtype), allowed=", ".join(DTYPES))
    if not _count_list(shape) or len(shape) != RANKS:
        raise AttentionFileError("rank", name=name, shape=clip(shape))
    if not _count_list(offsets) or len(offsets) != 2:
        raise AttentionFileError("bad_entry", name=name, field="data_offsets")
    return Entry(np.dtype(DTYPES[dtype]), dtype == "BF16", tuple(shape), offsets[0], offsets[1])


def _check_offsets(name: str, entry: Entry, body: int) -> None:
    """A tensor's bytes lie inside the data and are exactly as many as its (capped) shape needs."""
    if not entry.start <= entry.end <= body or entry.end - entry.start != math.prod(entry.shape) * entry.dtype.itemsize:
        raise AttentionFileError("offsets", name=name, start=clip(entry.start), end=clip(entry.end), size=body)


def _check_shapes(entries: dict[str, Entry]) -> None:
    """Shapes that agree with each other and stay within the caps (all from the header)."""
    if "attentions" not in entries:
        raise AttentionFileError("no_attentions")
    if ("queries" in entries) != ("keys" in entries):
        raise AttentionFileError("qk_pair")
    n_layers, n_heads, t_q, t_k = entries["attentions"].shape
    if min(n_layers, n_heads, t_q, t_k) < 1:
        raise AttentionFileError("empty", shape=clip(entries["attentions"].shape))
    if n_layers * n_heads > MAX_ATTN_HEADS:
        raise AttentionFileError("too_many_heads", layers=n_layers, heads=n_heads, cap=MAX_ATTN_HEADS)
    if max(t_q, t_k) > MAX_ATTN_TOKENS:
        raise AttentionFileError("too_many_tokens", count=max(t_q, t_k), cap=MAX_ATTN_TOKENS)
    if "queries" in entries:
        d = entries["queries"].shape[3]
        want = {"queries": (n_layers, n_heads, t_q, d), "keys": (n_layers, n_heads, t_k, d)}
        for name, shape in want.items():
            if entries[name].shape != shape or not 1 <= d <= MAX_ATTN_HEAD_DIM:
                raise AttentionFileError("qk_shape", name=name, shape=clip(entries[name].shape), want=clip(shape))
    values = sum(math.prod(entry.shape) for entry in entries.values())
    if values > MAX_ATTN_VALUES:
        raise AttentionFileError("too_many_values", count=values, cap=MAX_ATTN_VALUES)


def _tokens(meta: dict[str, str], key: str, count: int) -> tuple[str, ...]:
    """A token list from the metadata: a JSON array of `count` strings, each of bounded length."""
    if key not in meta:
        raise AttentionFileError("no_tokens", key=key)
    tokens = _parse_json(meta[key], key)
    if not isinstance(tokens, list) or not all(isinstance(tok, str) for tok in tokens):
        raise AttentionFileError("tokens_not_strings", key=key)
    if len(tokens) != count:
        raise AttentionFileError("token_count", key=key, count=len(tokens), want=count)
    if not all(_encodable(tok) for tok in tokens):
        raise AttentionFileError("token_text", key=key)
    long = next((tok for tok in tokens if len(tok) > MAX_ATTN_TOKEN_CHARS), None)
    if long is not None:
        raise AttentionFileError("token_too_long", token=clip(long), cap=MAX_ATTN_TOKEN_CHARS)
    return tuple(tokens)


def _encodable(text: str) -> bool:
    """Text a browser can be sent: JSON's escapes can spell lone surrogates, which UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _metadata(header: dict[str, object]) -> dict[str, str]:
    """The __metadata__ table: strings to strings, as safetensors defines it; a format, if named, must be ours."""
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise AttentionFileError("bad_metadata")
    if meta.get("format", FORMAT) != FORMAT:
        raise AttentionFileError("format", found=clip(meta["format"]), expected=FORMAT)
    if not _encodable(meta.get("model", "")):
        raise AttentionFileError("bad_metadata", "the model's name is not valid Unicode")
    if len(meta.get("model", "")) > MAX_ATTN_MODEL_CHARS:
        raise AttentionFileError("model_name", cap=MAX_ATTN_MODEL_CHARS)
    return meta


def _array(entry: Entry, data: bytes, offset: int) -> np.ndarray:
    """Exactly the declared values, in their own precision (bfloat16 widened to float32 exactly)."""
    count = math.prod(entry.shape)
    values = np.frombuffer(data, dtype=entry.dtype, count=count, offset=offset + entry.start).reshape(entry.shape)
    return (values.astype("<u4") << 16).view("<f4") if entry.bf16 else values


def _check_weights(a: np.ndarray, causal: bool) -> None:
    """Weights a softmax could give: finite, in [0, 1], each row summing to 1 or 0, causal when it says so."""
    if not np.isfinite(a).all():
        layer, head, row, col = np.argwhere(~np.isfinite(a))[0]
        raise AttentionFileError("not_finite", name="attentions", cell=f"[{layer}, {head}, {row}, {col}]")
    low, high = float(a.min()), float(a.max())
    if low < -TOL_ATTN_WEIGHT:
        raise AttentionFileError("negative", value=f"{low:.4g}")
    if high > 1 + TOL_ATTN_WEIGHT:
        raise AttentionFileError("above_one", value=f"{high:.4g}")
    sums = a.sum(axis=-1, dtype=np.float64)  # (L, H, T_q)
    bad = np.argwhere((np.abs(sums - 1) > TOL_ATTN_ROW_SUM) & (np.abs(sums) > TOL_ATTN_ROW_SUM))
    if len(bad):
        layer, head, row = bad[0]
        raise AttentionFileError(
            "row_sum", layer=int(layer) + 1, head=int(head) + 1, row=int(row) + 1, sum=f"{sums[tuple(bad[0])]:.4g}"
        )
    if causal and np.triu(np.abs(a), 1).max(initial=0) > TOL_ATTN_WEIGHT:
        raise AttentionFileError("not_causal")


def _check_qk(name: str, x: np.ndarray) -> None:
    """Queries or keys finite and of moderate size (a projection must not overflow)."""
    if not np.isfinite(x).all():
        raise AttentionFileError("not_finite", name=name, cell=clip(np.argwhere(~np.isfinite(x))[0].tolist()))
    if float(np.abs(x).max()) > MAX_ATTN_QK_ABS:
        raise AttentionFileError("qk_too_large", name=name, cap=f"{MAX_ATTN_QK_ABS:g}")


def _kind(
    meta: dict[str, str], tokens: tuple[str, ...], tokens_k: tuple[str, ...], a: torch.Tensor
) -> tuple[str, bool]:
    """The kind (named, or self when both sides are the same tokens) and the causal flag (named, or read off)."""
    kind = meta.get("kind", "self" if tokens == tokens_k else "cross")
    if kind not in KINDS:
        raise AttentionFileError("kind", kind=clip(kind), allowed=", ".join(KINDS))
    if kind != "cross" and tokens != tokens_k:
        raise AttentionFileError("self_tokens", kind=kind)
    causal = meta.get("causal")
    if causal not in (None, "true", "false"):
        raise AttentionFileError("bad_metadata", f"causal is {clip(causal)}")
    if causal is None:
        t_q, t_k = a.shape[-2:]
        return kind, kind != "cross" and t_q == t_k > 1 and not bool(a.triu(1).any())
    if causal == "true" and (kind == "cross" or a.size(-2) != a.size(-1)):
        raise AttentionFileError("not_causal")
    return kind, causal == "true"


def _read(data: bytes) -> AttentionFile:
    """Header, then shapes, then metadata, then the values: a checked AttentionFile."""
    header, offset = _header(data)
    meta = _metadata(header)
    entries = {name: _entry(name, header[name]) for name in TENSORS if name in header}
    _check_shapes(entries)
    for name, entry in entries.items():
        _check_offsets(name, entry, len(data) - offset)
    _, _, t_q, t_k = entries["attentions"].shape
    tokens, tokens_k = _tokens(meta, "tokens", t_q), _tokens(meta, "tokens_k", t_k) if "tokens_k" in meta else None
    tokens_k = tokens if tokens_k is None else tokens_k
    if tokens_k is tokens and t_q != t_k:
        raise AttentionFileError("token_count", key="tokens_k", count=t_q, want=t_k)
    arrays = {name: _array(entry, data, offset) for name, entry in entries.items()}
    causal_named = meta.get("causal") == "true"
    _check_weights(arrays["attentions"], causal_named)
    for name in ("queries", "keys"):
        if name in arrays:
            _check_qk(name, arrays[name])
    tensors = {name: torch.from_numpy(x.astype(np.float32)) for name, x in arrays.items()}
    kind, causal = _kind(meta, tokens, tokens_k, tensors["attentions"])
    return AttentionFile(
        tensors["attentions"],
        tokens,
        tokens_k,
        meta.get("model", ""),
        tensors.get("queries"),
        tensors.get("keys"),
        kind,
        causal,
    )


def load(filename: str, data: bytes) -> AttentionFile:
    """An uploaded attention file, checked; anything unusable is an AttentionFileError and nothing else escapes."""
    try:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise AttentionFileError("not_safetensors", f"got {type(data).__name__}, not bytes")
        data = bytes(data)
        if len(data) > MAX_ATTN_FILE_BYTES:
            raise AttentionFileError("too_big", size=len(data), cap=MAX_ATTN_FILE_BYTES)
        if str(filename).lower().endswith(PICKLE_SUFFIXES) or _is_pickle(data):
            raise AttentionFileError("pickle")
        return _read(data)
    except AttentionFileError:
        raise
    except MemoryError:
        raise AttentionFileError("too_big", size=len(data), cap=MAX_ATTN_FILE_BYTES) from None
    except Exception as err:  # a check this module missed must still not reach the user as a traceback
        raise AttentionFileError("unreadable", f"{type(err).__name__}: {err}") from None
