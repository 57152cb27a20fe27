"""The key/value cache page's URL parameters and how its settings hang together; `attnlab.links` serves them.

One module of `attnlab.links`, one per page family. Pure Python, like the package: the model names come from
`attnlab.kvcache` only when the scope is first asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attnlab.limits import (
    MAX_KV_BATCH,
    MAX_KV_BILLIONS,
    MAX_KV_CONTEXT,
    MAX_KV_LATENT,
    MAX_KV_SIZE,
    MAX_MLA_HEAD_DIM,
    MAX_MLA_HEADS,
    MAX_MLA_LATENT,
    MAX_MLA_ROPE,
    MAX_MLA_TOKENS,
    MAX_SEED,
)
from attnlab.params import (
    Param,
    choice_param,
    divisor_at_most,
    even_int_param,
    float_param,
    int_param,
    open_param,
    optional_int_param,
)

CUSTOM = "custom"  # the model choice that reads the typed shape
NUMBER_FORMATS = ("bf16", "fp8", "int4")  # bytes per cached number: 2, 1, 0.5 (attnlab.kvcache.BYTES)
SHAPE_FIELDS = ("layers", "heads", "kv_heads", "head_dim", "latent", "rope_dim", "window")


def kv_models() -> tuple[str, ...]:
    """The page's model choices: every shape in attnlab.kvcache.MODELS, then a typed one."""
    from attnlab.kvcache import MODELS

    return (*MODELS, CUSTOM)


def _kv() -> tuple[Param, ...]:
    """The model (or a typed shape: Llama-3-8B's by default), the context, batch and number format; the MLA section."""
    return (
        choice_param("model", "llama-3-8b", kv_models()),
        int_param("context", 8192, 1, MAX_KV_CONTEXT),
        int_param("batch", 1, 1, MAX_KV_BATCH),
        choice_param("bytes", "bf16", NUMBER_FORMATS),
        int_param("layers", 32, 1, MAX_KV_SIZE),
        int_param("heads", 32, 1, MAX_KV_SIZE),
        int_param("kv_heads", 8, 1, MAX_KV_SIZE),
        int_param("head_dim", 128, 1, MAX_KV_SIZE),
        int_param("latent", 0, 0, MAX_KV_LATENT),  # 0: not MLA
        int_param("rope_dim", 0, 0, MAX_KV_LATENT),  # MLA's shared rotated key; needs a latent
        optional_int_param("window", 1, MAX_KV_CONTEXT),  # none: every token stays cached; 0 is replaced and said
        float_param("billions", 8.0, 0.0, MAX_KV_BILLIONS),  # the typed model's parameters, for the weights
        int_param("mla_tokens", 6, 2, MAX_MLA_TOKENS),
        int_param("mla_heads", 4, 1, MAX_MLA_HEADS),
        int_param("mla_dh", 8, 1, MAX_MLA_HEAD_DIM),  # each head's unrotated query/key and value width
        int_param("mla_latent", 16, 1, MAX_MLA_LATENT),
        even_int_param("mla_rope", 4, 2, MAX_MLA_ROPE),
        int_param("mla_head", 1, 1, MAX_MLA_HEADS),  # the head drawn, counted from 1
        int_param("seed", 0, 0, MAX_SEED),
        open_param(("mla",)),  # the MLA section, folded until opened (`attnlab.ui.app.fold`)
    )


def settle_kv(v: dict[str, Any], raw: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """The typed shape and the MLA section made consistent; each replaced value as (name, what the link said, what is
    used, reason), the fields of `attnlab.links.common.Replaced` (the callers build it).

    kv_heads that do not divide heads become the largest divisor below them; a rotated key without a latent becomes
    0 (it belongs to MLA); a drawn head past the MLA's head count becomes the last head.
    """
    out = []

    def replace(name: str, used: Any, reason: str) -> None:
        out.append((name, raw.get(name, str(v[name])), str(used), reason))
        v[name] = used

    if v["heads"] % v["kv_heads"]:
        replace("kv_heads", divisor_at_most(v["heads"], v["kv_heads"]), "kv_heads_not_dividing")
    if v["rope_dim"] and not v["latent"]:
        replace("rope_dim", 0, "rope_needs_latent")
    if v["mla_head"] > v["mla_heads"]:
        replace("mla_head", v["mla_heads"], "no_such_head")
    return out


KV_SCOPES: dict[str, Callable[[], tuple[Param, ...]]] = {"kv": _kv}
