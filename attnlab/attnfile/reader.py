"""Loading an attention file that may be hostile: the header is parsed and checked before any array is read.

Order: the upload's size; a pickle (or torch.save's zip) named as one; the 8-byte header length against
the cap and the data; the JSON header (its size and container count bounded before json.loads builds
anything); each tensor's dtype, rank, shape and offsets against the caps and the data; the metadata
(format, kind, tokens, and the optional fields `attnlab.attnfile.fields` checks: grouping, score rule, why no q/k);
only then exactly the declared bytes are read, and the values checked: finite, weights in [0, 1], every row summing
to 1 or 0, the upper triangle empty when the file says it is causal, nothing outside a stated window.
The byte-level steps are `attnlab.untrusted`'s; `_refused` turns its refusals into AttentionFileErrors.
Every refusal is an AttentionFileError; nothing else gets out.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from attnlab.attnfile.fields import check_grouping, check_window, read_declined, read_rule
from attnlab.attnfile.file import FORMAT, KINDS, TENSORS, AttentionFile, AttentionFileError
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
from attnlab.untrusted import (
    PICKLE_SUFFIXES,
    ST_DTYPES,
    Entry,
    JsonRules,
    Refusal,
    clip,
    parse_json,
    pickled,
    st_array,
    st_entry,
    st_header,
    st_span,
)

DTYPES = {name: ST_DTYPES[name] for name in ("F64", "F32", "F16", "BF16")}  # floats only
RANKS = 4
JSON_RULES = JsonRules(MAX_ATTN_HEADER_CONTAINERS)  # the header and the token lists: UTF-8, containers capped


def _refused(err: Refusal, where: str = "header") -> AttentionFileError:
    """The AttentionFileError for a refusal of `attnlab.untrusted` (`where`: the JSON text it was reading)."""
    f, cause = err.fmt, err.cause
    match err.reason:
        case "json_encoding":
            return AttentionFileError("bad_json", str(cause), where=where)
        case "json_syntax" | "json_too_deep" | "json_number_too_long":
            return AttentionFileError("bad_json", f"{type(cause).__name__}: {cause}", where=where)
        case "json_too_many":
            return AttentionFileError("header_too_complex", count=f["count"], cap=f["cap"])
        case "json_duplicate_key":
            return AttentionFileError("json_duplicate_key", key=f["key"])
        case "st_length":
            return AttentionFileError("not_safetensors", err.detail)
        case "st_too_big":
            return AttentionFileError("header_too_big", size=f["size"], cap=f["cap"])
        case "st_not_object":
            return AttentionFileError("not_safetensors", "the header is not a JSON object")
        case "st_dtype":
            return AttentionFileError("dtype", name=f["name"], dtype=f["dtype"], allowed=f["allowed"])
        case "st_rank":
            return AttentionFileError("rank", name=f["name"], shape=f["shape"])
        case "st_entry" if f["field"] == "dtype":
            return AttentionFileError("dtype", name=f["name"], dtype=f["dtype"], allowed=f["allowed"])
        case "st_entry" if f["field"] == "shape":
            return AttentionFileError("rank", name=f["name"], shape=f["shape"])
        case "st_entry":
            return AttentionFileError("bad_entry", name=f["name"], field=f["field"])
        case "st_offsets" | "st_data_size":
            return AttentionFileError("offsets", name=f["name"], start=f["start"], end=f["end"], size=f["size"])
    raise AssertionError(f"no AttentionFileError for the refusal {err.reason!r}")


def _parse_json(text: str, where: str) -> object:
    """A JSON text from the metadata, bounded like the header; `where` names it in a refusal."""
    try:
        return parse_json(text, JSON_RULES)
    except Refusal as err:
        raise _refused(err, where) from None


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
        d, n_kv_heads = entries["queries"].shape[3], entries["keys"].shape[1]
        if not 1 <= n_kv_heads <= n_heads or n_heads % n_kv_heads:
            raise AttentionFileError("kv_heads", heads=n_heads, kv=n_kv_heads)
        want = {"queries": (n_layers, n_heads, t_q, d), "keys": (n_layers, n_kv_heads, t_k, d)}
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
    header, offset = st_header(data, JSON_RULES, max_bytes=MAX_ATTN_HEADER_BYTES, brace=True)
    meta = _metadata(header)
    entries = {name: st_entry(name, header[name], DTYPES, RANKS) for name in TENSORS if name in header}
    _check_shapes(entries)
    for name, entry in entries.items():
        st_span(name, entry, len(data) - offset)
    _, _, t_q, t_k = entries["attentions"].shape
    tokens, tokens_k = _tokens(meta, "tokens", t_q), _tokens(meta, "tokens_k", t_k) if "tokens_k" in meta else None
    tokens_k = tokens if tokens_k is None else tokens_k
    if tokens_k is tokens and t_q != t_k:
        raise AttentionFileError("token_count", key="tokens_k", count=t_q, want=t_k)
    n_layers, n_heads = entries["attentions"].shape[:2]
    check_grouping(meta, _parse_json, n_heads, entries["keys"].shape[1] if "keys" in entries else None)
    scale, softcap, window = read_rule(meta, _parse_json, n_layers)
    declined = read_declined(meta, "queries" in entries)
    arrays = {name: st_array(data, offset, entry) for name, entry in entries.items()}
    causal_named = meta.get("causal") == "true"
    _check_weights(arrays["attentions"], causal_named)
    for name in ("queries", "keys"):
        if name in arrays:
            _check_qk(name, arrays[name])
    tensors = {name: torch.from_numpy(x.astype(np.float32)) for name, x in arrays.items()}
    kind, causal = _kind(meta, tokens, tokens_k, tensors["attentions"])
    check_window(arrays["attentions"], window, causal)
    return AttentionFile(
        tensors["attentions"],
        tokens,
        tokens_k,
        meta.get("model", ""),
        tensors.get("queries"),
        tensors.get("keys"),
        kind,
        causal,
        scale,
        softcap,
        window,
        declined,
    )


def load(filename: str, data: bytes) -> AttentionFile:
    """An uploaded attention file, checked; anything unusable is an AttentionFileError and nothing else escapes."""
    try:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise AttentionFileError("not_safetensors", f"got {type(data).__name__}, not bytes")
        data = bytes(data)
        if len(data) > MAX_ATTN_FILE_BYTES:
            raise AttentionFileError("too_big", size=len(data), cap=MAX_ATTN_FILE_BYTES)
        if str(filename).lower().endswith(PICKLE_SUFFIXES) or pickled(data):
            raise AttentionFileError("pickle")
        return _read(data)
    except AttentionFileError:
        raise
    except Refusal as err:  # the header, read by attnlab.untrusted
        raise _refused(err) from None
    except MemoryError:
        raise AttentionFileError("too_big", size=len(data), cap=MAX_ATTN_FILE_BYTES) from None
    except Exception as err:  # a check this module missed must still not reach the user as a traceback
        raise AttentionFileError("unreadable", f"{type(err).__name__}: {err}") from None
