"""The Language model page's URL parameters and how its settings hang together; `attnlab.links` serves them.

One module of `attnlab.links`, one per page family. `model` is read against what this server offers when the link
is read (the shipped `zh` and `en`, and `ATTNLAB_LM_MODELS`), so a server's list is honoured by the page and its
notebook alike. `settle_lm` fills what depends on other values: a link without `model` opens the model of its
language, one without `text` that model's first text; a model the server does not offer is replaced and said.
"""

from __future__ import annotations

from typing import Any

from attnlab.limits import (
    MAX_LM_PAGE_GEN,
    MAX_LM_SINKS,
    MAX_LM_TEMPERATURE,
    MAX_LM_TOKENS,
    MAX_LM_WINDOW,
    MAX_SEED,
    MAX_STEP,
    MAX_TEXT_CHARS,
)
from attnlab.params import Invalid, Param, float_param, int_param, open_param, text_param

SHIPPED = ("zh", "en")  # attnlab.lm.SHIPPED (a test keeps the two equal): attnlab.links imports no torch
LAST = -1  # `step=-1`: the last checkpoint
LM_FOLDS = ("sinks", "training")  # the page's sections below the fold, folded until opened (`attnlab.ui.app.fold`)
WINDOW = 64  # the sink experiment's first window: StreamingLLM's cache sizes, scaled to a 256-character model
SINKS = 4  # StreamingLLM keeps the first four tokens
MAX_LAYERS = 1024  # layers or heads a link may name before the model is loaded (then bounded by its own)


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
        open_param(LM_FOLDS),
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
