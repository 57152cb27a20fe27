"""The Playground family's URL parameters, and how the Playground's settings hang together (`settle_lab`).

The family: the Playground, what-if, the presenter, Multi-head, Neuron view, Cross-attention and Tiled attention.

Pure Python: each builder imports the core module whose defaults it takes only when its scope is first asked for.
"""

from __future__ import annotations

from typing import Any

from attnlab.limits import MAX_D_MODEL, MAX_MULTIHEAD_FULL_D, MAX_SEED, MAX_TILED_TOKENS, MAX_TOKENS, MIN_D_MODEL
from attnlab.links.common import Replaced
from attnlab.params import (
    Invalid,
    Param,
    bool_param,
    choice_param,
    dump_bool,
    int_param,
    open_param,
    text_param,
)

INITS = ("random", "identity", "zeros")
NEURON_PRESETS = ("lab", "thinking")
# Multi-head's sections 4 to 10, folded until opened (`attnlab.ui.app.fold`): their names in its `open` parameter
MULTIHEAD_SECTIONS = ("resplit", "concat", "fused", "dropout", "torch", "full", "gqa")
CROSS_SECTIONS = ("bottleneck", "check")  # Cross-attention's sections 4 and 5, likewise


def parse_pad(raw: str) -> list[int]:
    """Padded source positions from the URL: comma-separated whole numbers below the token cap."""
    from attnlab.anatomy.cross import CrossConfig

    try:
        items = [int(s) for s in str(raw).replace(" ", "").split(",") if s]
    except ValueError:
        items = None
    if items is None or any(not 0 <= j < MAX_TOKENS for j in items):
        raise Invalid("not_positions", list(CrossConfig().pad), hi=MAX_TOKENS - 1)
    return sorted(set(items))


def _lab() -> tuple[Param, ...]:
    from attnlab.masks import KINDS
    from attnlab.pipeline import ROPES, LabConfig

    first = LabConfig()
    return (
        text_param("text", first.text),
        int_param("d_model", first.d_model, MIN_D_MODEL, MAX_D_MODEL),
        int_param("heads", first.heads, 1, MAX_D_MODEL),
        bool_param("causal", first.causal),
        int_param("seed", first.seed, 0, MAX_SEED),
        choice_param("init", first.init, INITS),
        bool_param("pe", first.positions),
        int_param("head", 0, 1 - MAX_D_MODEL, MAX_D_MODEL),  # 0 or -g: a group of heads side by side; h: head h
        int_param("kv_heads", first.heads, 1, MAX_D_MODEL),  # absent from a link: as many as heads (settle_lab)
        choice_param("rope", first.rope, ROPES),
        bool_param("alibi", first.alibi),
        choice_param("mask", "full", KINDS),  # absent from a link: from `causal` (settle_lab)
        int_param("window", first.window, 1, MAX_TOKENS),
        int_param("sinks", first.sinks, 0, MAX_TOKENS),
        int_param("prefix", first.prefix, 0, MAX_TOKENS),
    )


def settle_lab(v: dict[str, Any], raw: dict[str, str]) -> list[Replaced]:
    """The Playground's settings that hang together, once heads divide d_model (contract 13).

    `mask` decides the mask; a link without one keeps contract 4's `causal` (true: mask=causal), and `causal` then
    follows the mask (true for the rules that never show a later key). A `causal` the link's `mask` contradicts is
    replaced and said. `kv_heads` absent means one per query head; one that does not divide `heads` becomes the
    largest divisor below it.
    """
    from attnlab.pipeline import CAUSAL_MASKS, kv_divisor

    out = []
    if "mask" not in raw:
        v["mask"] = "causal" if v["causal"] else "full"
    causal = v["mask"] in CAUSAL_MASKS
    if "mask" in raw and "causal" in raw and v["causal"] != causal:
        out.append(Replaced("causal", raw["causal"], dump_bool(causal), "causal_vs_mask"))
    v["causal"] = causal
    if "kv_heads" not in raw:
        v["kv_heads"] = v["heads"]
    elif v["heads"] % v["kv_heads"]:
        used = kv_divisor(v["heads"], v["kv_heads"])
        out.append(Replaced("kv_heads", raw["kv_heads"], str(used), "kv_heads_not_dividing"))
        v["kv_heads"] = used
    return out


def _whatif() -> tuple[Param, ...]:
    from attnlab.classroom.whatif import CHANGES

    return (choice_param("compare", "none", ("none", *CHANGES)),)


def _present() -> tuple[Param, ...]:
    from attnlab.stages import N_STEPS

    return int_param("step", 1, 1, N_STEPS), bool_param("quiz", True)


def _multihead() -> tuple[Param, ...]:
    return (
        text_param("p", "0", 20),
        int_param("dseed", 0, 0, MAX_SEED),
        int_param("cmp", 1, 1, MAX_D_MODEL),
        int_param("full_d", 512, 1, MAX_MULTIHEAD_FULL_D),
        int_param("full_h", 8, 1, MAX_MULTIHEAD_FULL_D),
        int_param("gqa_h", 4, 1, MAX_D_MODEL),  # the MHA/GQA/MQA comparison's query heads: a divisor of d_model
        int_param("gqa_kv", 2, 1, MAX_D_MODEL),  # its GQA column's key/value heads: a divisor of gqa_h
        open_param(MULTIHEAD_SECTIONS),
    )


def _neuron() -> tuple[Param, ...]:
    return (
        int_param("q", 0, 0, MAX_TOKENS - 1),
        int_param("h", 1, 1, MAX_D_MODEL),
        choice_param("preset", "lab", NEURON_PRESETS),
        int_param("tq", 0, 0, 1),
    )


def _cross() -> tuple[Param, ...]:
    from attnlab.anatomy.cross import CrossConfig

    first = CrossConfig()
    return (
        text_param("src", first.source),
        text_param("tgt", first.target),
        bool_param("causal", first.causal),
        Param("pad", list(first.pad), parse_pad, lambda pad: ",".join(str(j) for j in pad)),
        int_param("d_model", first.d_model, MIN_D_MODEL, MAX_D_MODEL),
        int_param("heads", first.heads, 1, MAX_D_MODEL),
        int_param("seed", first.seed, 0, MAX_SEED),
        int_param("head", 0, 1 - MAX_D_MODEL, MAX_D_MODEL),
        open_param(CROSS_SECTIONS),
    )


def _tiled() -> tuple[Param, ...]:
    return (
        int_param("T", 6, 1, MAX_TILED_TOKENS),
        int_param("d", 4, 1, 8),
        int_param("bq", 3, 1, MAX_TILED_TOKENS),
        int_param("bk", 2, 1, MAX_TILED_TOKENS),
        bool_param("causal", False),
        int_param("seed", 0, 0, 999_999),
        int_param("step", 1, 1, 999_999),  # past the last step: clamped by the page, and said
    )


EXPLORE_SCOPES = {
    "lab": _lab,
    "whatif": _whatif,
    "present": _present,
    "mh": _multihead,
    "neuron": _neuron,
    "cross": _cross,
    "tiled": _tiled,
}
