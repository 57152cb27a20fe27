"""The optional fields of an attention file, read from an upload that may be hostile: grouping, rule, why no q/k.

`kv_head_of` must be exactly the grouping attention uses (query head h reads key/value head h // (H / H_kv)); a
file whose keys have fewer heads than its queries must state it. `scale`, `softcap` and `window` list one value per
layer (`attnlab.attnfile.rule`); scale and cap describe scores, so they need queries and keys; a window needs
causal attention, and no weight may fall outside it. `qk_declined` names why a capture kept no queries and keys
(one of DECLINED), so a file holding them cannot say it. Each check refuses with an AttentionFileError; the JSON
texts are parsed by the reader's bounded parser, handed in as `parse`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from attnlab.attnfile.file import DECLINED, AttentionFileError
from attnlab.attnfile.rule import grouping, visible
from attnlab.limits import MAX_ATTN_RULE_VALUE, MAX_ATTN_WINDOW, TOL_ATTN_WEIGHT
from attnlab.untrusted import clip

Parse = Callable[[str, str], object]  # (JSON text, the key it came from) -> value, refusing bad JSON
QK_FIELDS = ("kv_head_of", "scale", "softcap")  # what only a file with queries and keys may state


def check_grouping(meta: dict[str, str], parse: Parse, n_heads: int, n_kv_heads: int | None) -> None:
    """Key heads that divide the query heads, and the grouping stated as attention uses it (None: no keys)."""
    for key in QK_FIELDS:
        if n_kv_heads is None and key in meta:
            raise AttentionFileError("rule_without_qk", key=key)
    if n_kv_heads is None:
        return
    if not 1 <= n_kv_heads <= n_heads or n_heads % n_kv_heads:
        raise AttentionFileError("kv_heads", heads=n_heads, kv=n_kv_heads)
    want = grouping(n_heads, n_kv_heads)
    if "kv_head_of" not in meta and n_kv_heads == n_heads:
        return  # a file from before grouped heads: one key head per query head
    if "kv_head_of" not in meta or parse(meta["kv_head_of"], "kv_head_of") != want:
        raise AttentionFileError("kv_grouping", want=clip(want), group=n_heads // n_kv_heads)


def _number(value: object, whole: bool) -> bool:
    """A JSON number (never a boolean), whole where asked, finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) if whole else math.isfinite(value)


def _values(meta: dict[str, str], parse: Parse, key: str, n_layers: int) -> list | None:
    """One JSON list of n_layers values for `key`, checked against its own bounds; None when absent."""
    if key not in meta:
        return None
    values = parse(meta[key], key)
    whole, cap = (True, MAX_ATTN_WINDOW) if key == "window" else (False, MAX_ATTN_RULE_VALUE)
    nullable = key != "scale"
    ok = isinstance(values, list) and len(values) == n_layers
    if ok:
        ok = all((v is None and nullable) or (_number(v, whole) and 0 < v <= cap) for v in values)
    if not ok:
        raise AttentionFileError(f"bad_{key}", n=n_layers, cap=f"{cap:g}")
    return values


def read_rule(meta: dict[str, str], parse: Parse, n_layers: int) -> tuple[tuple, tuple, tuple]:
    """(scale, softcap, window) per layer, () where the file states none (the defaults)."""
    scale, softcap, window = (_values(meta, parse, key, n_layers) for key in ("scale", "softcap", "window"))
    return (
        tuple(float(v) for v in scale) if scale else (),
        tuple(None if v is None else float(v) for v in softcap) if softcap else (),
        tuple(window) if window else (),
    )


def read_declined(meta: dict[str, str], has_qk: bool) -> str:
    """Why a capture kept no queries and keys, or ""."""
    found = meta.get("qk_declined", "")
    if found and (found not in DECLINED or has_qk):
        raise AttentionFileError("bad_declined", found=clip(found), allowed=", ".join(DECLINED))
    return found


def check_window(a: np.ndarray, window: tuple, causal: bool) -> None:
    """A stated window needs causal attention, and every weight outside it is 0 (within the rounding allowed)."""
    if not any(w is not None for w in window):
        return
    if not causal:
        raise AttentionFileError("window_not_causal")
    t_q, t_k = a.shape[-2:]
    for layer, w in enumerate(window):
        if w is None:
            continue
        outside = ~visible(t_q, t_k, True, w).numpy()  # (T_q, T_k)
        if outside.any() and float(np.abs(a[layer][:, outside]).max()) > TOL_ATTN_WEIGHT:
            raise AttentionFileError("outside_window", layer=layer + 1, window=w)
