"""The Language model page's URL parameters and how its settings hang together; `attnlab.links` serves them.

One module of `attnlab.links`, one per page family. `model` is read against what this server offers when the link
is read (the shipped `zh` and `en`, and `ATTNLAB_LM_MODELS`), so a server's list is honoured by the page and its
notebook alike. `settle_lm` fills what depends on other values: a link without `model` opens the model of its
language, one without `text` that model's first text; a model the server does not offer is replaced and said.
Contract 19's values: `top_k` and `top_p` (none: no cut), `open` (the sections below the fold a link opens: the
lens, the attribution, the branches, the sink experiment, training), `target` (the character whose logit is taken
apart; empty: the prediction), `temps` (the three branches' temperatures), `branch` (the characters the branches go
on from after the text) and `pick` (`row.index` of a branched character whose alternatives are shown). Whether a
target or a branch fits the model (its vocabulary, its length) is known once it is loaded: the page says so then and
keeps what was typed.
"""

from __future__ import annotations

from typing import Any

from attnlab.limits import (
    MAX_LM_PAGE_GEN,
    MAX_LM_SINKS,
    MAX_LM_TEMPERATURE,
    MAX_LM_TOKENS,
    MAX_LM_TOP_K,
    MAX_LM_WINDOW,
    MAX_SEED,
    MAX_STEP,
    MAX_TEXT_CHARS,
)
from attnlab.params import (
    NONE_WORDS,
    Invalid,
    Param,
    dump_float,
    float_param,
    int_param,
    open_param,
    optional_int_param,
    parse_number,
    text_param,
)

SHIPPED = ("zh", "en")  # attnlab.lm.SHIPPED (a test keeps the two equal): attnlab.links imports no torch
LAST = -1  # `step=-1`: the last checkpoint
WINDOW = 64  # the sink experiment's first window: StreamingLLM's cache sizes, scaled to a 256-character model
SINKS = 4  # StreamingLLM keeps the first four tokens
MAX_LAYERS = 1024  # layers or heads a link may name before the model is loaded (then bounded by its own)
SECTIONS = ("lens", "attribution", "branches", "sinks", "training")  # below the fold, drawn when `open` names them
TEMPS = (0.0, 0.7, 1.2)  # the branches' temperatures: greedy, a little, a lot
MAX_TARGET_CHARS = 16  # the attribution's character (one token; a Hub model's token may be a few characters)


def offered() -> tuple[str, ...]:
    """The models this server offers: the shipped runs, then ATTNLAB_LM_MODELS's folders and Hub ids."""
    from attnlab.lm.loading import allowed_models

    return (*SHIPPED, *(m for m in allowed_models() if m not in SHIPPED))


def model_name(raw: str) -> str:
    """A link's model as it stands (outside text); `settle_lm` decides whether it is offered."""
    return str(raw).strip()


def window_param() -> Param:
    """The sink experiment's window: 1..MAX_LM_WINDOW tokens; 0 or below is the first window (and said)."""
    whole = int_param("window", WINDOW, 1, MAX_LM_WINDOW)

    def parse(raw: str) -> int:
        try:
            return whole.parse(raw)
        except Invalid as bad:
            if bad.reason == "out_of_range" and bad.used == 1:
                raise Invalid("not_above", WINDOW, lo=0) from None
            raise

    return Param("window", WINDOW, parse, str, 1, MAX_LM_WINDOW)


def top_p_param() -> Param:
    """top-p: a share in (0, 1], or none (no cut). At or below 0 it is none (and said); above 1 it is 1 (and said)."""

    def parse(raw: str) -> float | None:
        if str(raw).strip().lower() in NONE_WORDS:
            return None
        try:
            value = parse_number(raw)
        except (ValueError, OverflowError):
            raise Invalid("not_number", None) from None
        if value <= 0:
            raise Invalid("not_above", None, lo=0)
        if value > 1:
            raise Invalid("out_of_range", 1.0, lo=0, hi=1)
        return value

    return Param("top_p", None, parse, lambda v: "none" if v is None else dump_float(v), 0.0, 1.0)


def temps_param() -> Param:
    """The three branches' temperatures, each 0..MAX_LM_TEMPERATURE: one that is no number or missing is the first
    value's own, one out of range is clamped, one past three is dropped (each said)."""

    def parse(raw: str) -> tuple[float, ...]:
        items = [s.strip() for s in str(raw).split(",")]
        values, fine = [], len(items) == len(TEMPS)
        for i, default in enumerate(TEMPS):
            try:
                value = parse_number(items[i])
            except (ValueError, OverflowError, IndexError):
                value, fine = default, False
            clamped = min(max(value, 0.0), MAX_LM_TEMPERATURE)
            fine = fine and clamped == value
            values.append(clamped)
        if not fine:
            raise Invalid("temps", tuple(values), hi=dump_float(MAX_LM_TEMPERATURE))
        return tuple(values)

    return Param("temps", TEMPS, parse, lambda v: ",".join(dump_float(x) for x in v), 0.0, MAX_LM_TEMPERATURE)


def pick_param() -> Param:
    """A branched character: `row.index` (both from 1), or none; anything else is none (and said)."""

    def parse(raw: str) -> tuple[int, int] | None:
        word = str(raw).strip().lower()
        if word in NONE_WORDS:
            return None
        parts = word.split(".")
        if len(parts) != 2 or not all(p.isdigit() and 1 <= int(p) <= MAX_LM_TOKENS for p in parts):
            raise Invalid("not_pick", None)
        return int(parts[0]), int(parts[1])

    return Param("pick", None, parse, lambda v: "" if v is None else f"{v[0]}.{v[1]}")


def _lm() -> tuple[Param, ...]:
    from attnlab.lmlab.texts import first_text

    return (
        # "": the model of the link's language; options: the shipped runs, which every server offers (settle_lm reads
        # the rest, and replaces and says a model the server does not offer)
        Param("model", "", model_name, options=SHIPPED),
        text_param("text", first_text("zh"), MAX_TEXT_CHARS),  # absent: the model's first text (settle_lm)
        int_param("layer", 1, 1, MAX_LAYERS),  # bounded by the model's own shape once it is loaded
        int_param("head", 1, 1, MAX_LAYERS),
        int_param("q", 0, 0, MAX_LM_TOKENS),  # 0: after the whole text; i: the prediction made for token i
        float_param("temperature", 0.0, 0.0, MAX_LM_TEMPERATURE),  # 0: greedy
        int_param("seed", 0, 0, MAX_SEED),
        int_param("gen", 0, 0, MAX_LM_PAGE_GEN),  # characters generated after the text so far
        window_param(),
        int_param("sinks", SINKS, 0, MAX_LM_SINKS),
        int_param("step", LAST, LAST, MAX_STEP),  # a checkpoint; another is replaced by the nearest (the page)
        optional_int_param("top_k", 1, MAX_LM_TOP_K),  # none: no cut; below 1 is none (and said)
        top_p_param(),
        open_param(SECTIONS),
        text_param("target", "", MAX_TARGET_CHARS),  # "": the predicted character
        temps_param(),
        text_param("branch", "", MAX_TEXT_CHARS),
        pick_param(),
    )


def settle_lm(v: dict[str, Any], raw: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """The model and text a link means (the page and its notebook alike); (name, raw, used, reason) of each
    value replaced. Needs the app scope's `lang` in `v`."""
    from attnlab.lmlab.texts import first_text

    out = []
    own = "zh" if v["lang"] == "zh" else "en"
    if not v["model"]:
        v["model"] = own
    elif v["model"].lower() in SHIPPED:
        v["model"] = v["model"].lower()
    elif v["model"] not in offered():
        out.append(("model", raw.get("model", ""), own, "not_offered"))
        v["model"] = own
    if "text" not in raw:
        v["text"] = first_text(v["model"] if v["model"] in SHIPPED else own)
    return out


def nearest(steps: list[int], step: int) -> int:
    """The checkpoint a link's step means: -1 (or no steps) the last, otherwise the nearest (the earlier on a tie)."""
    if not steps:
        return step
    if step == LAST:
        return steps[-1]
    return min(steps, key=lambda s: (abs(s - step), s))


LM_SCOPES = {"lm": _lm}
