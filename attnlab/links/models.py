"""The model pages' URL parameters: the Real model (MiniLM), the Trained decoder and the Attention file.

Pure Python: the examples and MiniLM's window come from their modules only when a scope is first asked for.
"""

from __future__ import annotations

from attnlab.limits import (
    DECODER_GEN_STEPS,
    MAX_ATTN_HEADS,
    MAX_ATTN_TOKENS,
    MAX_DECODER_SEQ_CHARS,
    MAX_STEP,
    TRAINED_MAX_SYMBOLS,
)
from attnlab.params import Param, choice_param, int_param, open_param, optional_int_param, text_param

DECODER_MODELS = {"2l": "induction-2l", "1l": "induction-1l"}  # the URL's short name -> the shipped recipe
LAST = -1  # the decoder's `step=-1`: the last checkpoint
DECODER_SEQ = "k 3 x m q 7 k 3 x m q 7 k 3 x m q 7"
DECODER_INSIDE = ("off", "generate", "heads", "paths")  # the "inside the circuit" sections: closed, or one of three
DECODER_CORRUPTIONS = ("redraw", "shuffle", "typed")  # first period redrawn, first period shuffled, the user's own
DECODER_FOLDS = ("table", "training", "yours")  # folded until opened: the guesses, the curves, your own run
SHIPPED_HEADS = 4  # heads per layer in both shipped recipes (a test holds this to their log.json)
REAL_VIEWS = ("model", "head", "stages", "finder", "rollout", "similarity", "qk")
SOURCE_VIEWS = ("model", "head", "qk", "finder", "rollout")  # every view of an attention source


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
        open_param(DECODER_FOLDS),  # sections folded until opened (`attnlab.ui.app.fold`)
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


MODEL_SCOPES = {"real": _real, "decoder": _decoder, "attnfile": _attnfile}
