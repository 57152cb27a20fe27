"""What each page reads from its link: every page's URL parameters, and a query string parsed without Streamlit.

The pages bind these same Params to their widgets (`attnlab.ui.app.state.PageState`), and the notebook writer
(`attnlab.notebook`) parses a query with them, so a link means the same on the page and in a notebook, and a
value that cannot be honoured falls back to the same value in both. Pure Python: torch and numpy only through
the core modules whose defaults the parameters take, and each scope's only when it is first asked for (`params`):
a thread that warms one page's imports never imports another page's modules.
"""

from __future__ import annotations

import functools
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from attnlab.limits import (
    DECODER_GEN_STEPS,
    MAX_ATTN_HEADS,
    MAX_ATTN_TOKENS,
    MAX_D_MODEL,
    MAX_DECODER_SEQ_CHARS,
    MAX_MULTIHEAD_FULL_D,
    MAX_SEED,
    MAX_STEP,
    MAX_TILED_TOKENS,
    MAX_TOKENS,
    MIN_D_MODEL,
    TRAINED_MAX_SYMBOLS,
)
from attnlab.links_kv import KV_SCOPES
from attnlab.links_lessons import LESSON_SCOPES
from attnlab.links_lm import LM_SCOPES
from attnlab.params import (
    Invalid,
    Param,
    bool_param,
    choice_param,
    dump_bool,
    int_param,
    list_param,
    optional_int_param,
    text_param,
)

LANGS = ("en", "zh")
PALETTE_NAMES = ("default", "cb")  # attnlab.figures.palette.PALETTES' names (a test keeps the two equal)
INITS = ("random", "identity", "zeros")
DECODER_MODELS = {"2l": "induction-2l", "1l": "induction-1l"}  # the URL's short name -> the shipped recipe
LAST = -1  # the decoder's `step=-1`: the last checkpoint
DECODER_SEQ = "k 3 x m q 7 k 3 x m q 7 k 3 x m q 7"
DECODER_INSIDE = ("off", "generate", "heads", "paths")  # the "inside the circuit" sections: closed, or one of three
DECODER_CORRUPTIONS = ("redraw", "shuffle", "typed")  # first period redrawn, first period shuffled, the user's own
SHIPPED_HEADS = 4  # heads per layer in both shipped recipes (a test holds this to their log.json)
REAL_VIEWS = ("model", "head", "stages", "finder", "rollout", "similarity", "qk")
SOURCE_VIEWS = ("model", "head", "qk", "finder", "rollout")  # every view of an attention source
NEURON_PRESETS = ("lab", "thinking")
BENCH_IMPLS = ["explicit", "tiled", "sdpa", "sdpa-math", "sdpa-flash"]  # the Benchmark page's first sweep
BENCH_SEQ = [64, 128, 256, 512]
BENCH_SEQ_OPTIONS: tuple[int, ...] = tuple(2**i for i in range(4, 15))  # 16 .. 16384
BENCH_MASKS = ("full", "causal", "window", "documents")  # the Benchmark's mask rules (contract 15)
BENCH_DOCS = (2, 4, 8, 16)  # packed documents: each divides every length the page offers


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


def _app() -> tuple[Param, ...]:  # ui.app.state.APP's (kept there: the sidebar never waits for this module)
    return choice_param("lang", "en", LANGS), choice_param("palette", PALETTE_NAMES[0], PALETTE_NAMES)


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
    )


def _real() -> tuple[Param, ...]:
    from attnlab.pretrained.encoder import MAX_TOKENS as MINILM_TOKENS

    return (
        text_param("text", "The animal didn't cross the street because it was too tired."),
        int_param("layer", 1, 1, MAX_ATTN_HEADS),  # bounded by the model's own shape once it is loaded
        int_param("head", 1, 1, MAX_ATTN_HEADS),
        choice_param("view", "model", REAL_VIEWS),
        int_param("q", 0, 0, MINILM_TOKENS),  # 0: every query; k: the k-th token's row
        text_param("text_b", "The tired animal stayed on this side of the road."),
    )


def _decoder() -> tuple[Param, ...]:
    return (
        choice_param("model", "2l", tuple(DECODER_MODELS)),
        int_param("step", LAST, LAST, MAX_STEP),
        text_param("seq", DECODER_SEQ, MAX_DECODER_SEQ_CHARS),
        choice_param("inside", "off", DECODER_INSIDE),
        int_param("gen", 1, 1, DECODER_GEN_STEPS),
        choice_param("corrupt", "redraw", DECODER_CORRUPTIONS),
        text_param("corrupt_seq", "", MAX_DECODER_SEQ_CHARS),
        choice_param("receiver", "2.1", tuple(f"{ly}.{hd}" for ly in (1, 2) for hd in range(1, SHIPPED_HEADS + 1))),
        choice_param("into", "k", ("q", "k", "v")),
        optional_int_param("window", 1, TRAINED_MAX_SYMBOLS + 1),  # the stepper's window cache (+1: the marker)
        int_param("sinks", 0, 0, TRAINED_MAX_SYMBOLS),  # tokens it keeps from the start (contract 14)
    )


def attn_sources() -> tuple[str, ...]:
    """The Attention file page's sources: every bundled example, then an upload."""
    from attnlab.attnexamples import EXAMPLES

    return (*EXAMPLES, "upload")


def _attnfile() -> tuple[Param, ...]:
    from attnlab.attnexamples import EXAMPLES

    sources = attn_sources()
    return (
        choice_param("source", sources[0], sources),
        text_param("text", EXAMPLES[sources[0]].text),
        choice_param("view", "model", SOURCE_VIEWS),
        int_param("layer", 1, 1, MAX_ATTN_HEADS),  # layers x heads is capped, so each alone too
        int_param("head", 1, 1, MAX_ATTN_HEADS),
        int_param("q", 0, 0, MAX_ATTN_TOKENS),  # 0: every query; i: the i-th query token
        int_param("k", 0, 0, MAX_ATTN_TOKENS),  # 0: no key followed; j: who looks at the j-th key
    )


def _bench() -> tuple[Param, ...]:  # the sweep's settings (which recorded file to show stays the page's own)
    from attnlab.bench import DTYPES, IMPLS

    return (
        choice_param("dtype", "float32", tuple(DTYPES)),
        int_param("heads", 4, 1, 64),
        int_param("head_dim", 64, 1, 256),
        int_param("batch", 1, 1, 16),
        bool_param("causal", False),  # older links: causal=true means mask=causal
        list_param("impls", BENCH_IMPLS, IMPLS),
        list_param("seq", BENCH_SEQ, BENCH_SEQ_OPTIONS),
        choice_param("mask", "full", BENCH_MASKS),
        int_param("window", 128, 1, BENCH_SEQ_OPTIONS[-1]),
        choice_param("docs", 4, BENCH_DOCS),
        list_param("kv_heads", [4], tuple(range(1, 65))),  # each a divisor of heads; the page's default is [heads]
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


SCOPES: dict[str, Callable[[], tuple[Param, ...]]] = {  # scope (its session-state prefix) -> its Params' builder
    "app": _app,
    "lab": _lab,
    "whatif": _whatif,
    "present": _present,
    "mh": _multihead,
    "neuron": _neuron,
    "cross": _cross,
    "real": _real,
    "decoder": _decoder,
    "attnfile": _attnfile,
    **LESSON_SCOPES,
    "bench": _bench,
    "tiled": _tiled,
    **KV_SCOPES,
    **LM_SCOPES,
}


@functools.lru_cache(maxsize=len(SCOPES))
def params(scope: str) -> tuple[Param, ...]:
    """One scope's Params, built on first use: each imports only what its page imports anyway."""
    return SCOPES[scope]()


@dataclass(frozen=True)
class Replaced:
    """A link's value that could not be honoured: what it said and what is used instead (outside text kept raw)."""

    name: str
    raw: str
    used: str
    reason: str


def split_query(query: str) -> dict[str, str]:
    """A URL query string ("text=I+like+you&heads=2", with or without "?") as {name: last value}.

    A piece with no "=" is not a parameter a page could have written: ValueError naming it. A value is never
    refused here (the page's Param replaces a bad one); empty pieces ("a=1&&b=2") are skipped, as browsers do.
    """
    pieces = [piece for piece in query.lstrip("?").split("&") if piece]
    for piece in pieces:
        if "=" not in piece:
            name = urllib.parse.unquote_plus(piece)[:40]
            raise ValueError(f"malformed query: parameter {name!r} has no value (write {name}=...)")
    return dict(urllib.parse.parse_qsl("&".join(pieces), keep_blank_values=True))


def read(scopes: Sequence[str], query: dict[str, str]) -> tuple[dict[str, dict[str, Any]], list[Replaced]]:
    """Each scope's values for a parsed query, as its page reads them: a bad value falls back the same way."""
    values: dict[str, dict[str, Any]] = {}
    replaced: list[Replaced] = []
    for scope in scopes:
        values[scope] = {}
        for param in params(scope):
            raw = query.get(param.name)
            values[scope][param.name], bad = param.read(raw)
            if bad is not None:
                replaced.append(Replaced(param.name, raw, param.dump(bad.used), bad.reason))
    return values, replaced
