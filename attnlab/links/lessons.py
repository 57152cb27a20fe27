"""The lessons' URL parameters, one builder per lesson scope; `attnlab.links` serves them with every other page's.

One module of `attnlab.links`, one per page family. Pure Python, like the package: each
builder imports its lesson's module only when its scope is first asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.limits import (
    MAX_COST_T,
    MAX_DICTIONARY_VALUE,
    MAX_ROPE_BASE,
    MAX_ROPE_D,
    MAX_ROPE_DIST,
    MAX_ROPE_POS,
    MAX_ROPE_SHIFT,
    MAX_SCALING_DK,
    MAX_SEED,
    MIN_COST_T,
)
from attnlab.params import (
    Param,
    above_param,
    bool_param,
    choice_param,
    even_int_param,
    float_param,
    int_param,
    open_param,
    text_param,
)


def _dictionary() -> tuple[Param, ...]:
    from attnlab.lessons import dictionary
    from attnlab.lessons.parse import dump_vector

    keys = dictionary.KEYS
    return (
        text_param("word", "apple", 40),
        *(
            float_param(f"v_{k}", v, -MAX_DICTIONARY_VALUE, MAX_DICTIONARY_VALUE)
            for k, v in zip(keys, dictionary.VALUES, strict=True)
        ),
        *(float_param(f"w_{k}", w, 0.0, 1.0) for k, w in zip(keys, dictionary.FRUIT_WEIGHTS, strict=True)),
        text_param("q", dump_vector(list(dictionary.QUERY_VECTOR)), 200),
        *(text_param(f"k_{k}", dump_vector(list(v)), 200) for k, v in zip(keys, dictionary.KEY_VECTORS, strict=True)),
        float_param("temp", 1.0, 0.0, 3.0),
    )


def _scaling() -> tuple[Param, ...]:
    return (
        int_param("dk", 64, 1, MAX_SCALING_DK),
        int_param("keys", 8, 2, 64),
        bool_param("scaled", True),
        int_param("seed", 0, 0, MAX_SEED),
    )


def _positions() -> tuple[Param, ...]:
    from attnlab.lessons.positions import PERMUTATIONS

    return (
        text_param("text", "the dog chased a cat", 500),
        int_param("d_model", 8, 2, 64),
        int_param("seed", 0, 0, MAX_SEED),
        choice_param("perm", "reverse", PERMUTATIONS),
        bool_param("pe", False),
        int_param("n_pos", 50, 1, 256),
        int_param("pe_d", 64, 2, 128),
        open_param(("values",)),  # the sinusoids' first values, folded until opened (`attnlab.ui.app.fold`)
    )


def _rope() -> tuple[Param, ...]:
    from attnlab.positions import LAYOUTS

    return (
        even_int_param("d", 64, 2, MAX_ROPE_D),
        above_param("base", 10000.0, 1.0, MAX_ROPE_BASE),
        choice_param("layout", LAYOUTS[0], LAYOUTS),
        int_param("pair", 0, 0, MAX_ROPE_D // 2 - 1),  # at most d/2 - 1: checked again once d is known
        int_param("pos", 5, 0, MAX_ROPE_POS),
        int_param("shift", 100, 0, MAX_ROPE_SHIFT),
        int_param("dist", 512, 16, MAX_ROPE_DIST),
        int_param("seed", 0, 0, MAX_SEED),
    )


def _masking() -> tuple[Param, ...]:
    from attnlab.lessons import masking

    return (
        text_param("text", "<BOS> I like you <EOS>", 500),
        choice_param("blank", "last", masking.BLANK_ROWS),
        choice_param("dtype", "float16", tuple(masking.DTYPES)),
        choice_param("fill", "-1e9", masking.FILLS),
        open_param(("rows", "fills")),  # the two tables, folded until opened (`attnlab.ui.app.fold`)
    )


def _cost() -> tuple[Param, ...]:
    return (
        int_param("t_min", 128, MIN_COST_T, MAX_COST_T),
        int_param("t_max", 2048, MIN_COST_T, MAX_COST_T),
        int_param("d", 64, 8, 128),
        int_param("rec", 0, 0, 999),
        int_param("rnn_t", 512, 2, 100_000),
        int_param("rnn_d", 512, 2, 4096),
        open_param(("table",)),  # the live run's numbers, folded until opened (`attnlab.ui.app.fold`)
    )


LESSON_SCOPES: dict[str, Callable[[], tuple[Param, ...]]] = {  # in course order
    "ldict": _dictionary,
    "lscale": _scaling,
    "lpos": _positions,
    "lrope": _rope,
    "lmask": _masking,
    "lcost": _cost,
}
