"""The Language model page's state and shared numbers: its link, the loaded models, each text's reading.

Every model (a shipped run at a checkpoint, or a model the server offers) is loaded once per server process and
shared read-only (`st.cache_resource`), and so is each text's reading, trace, lens and each generation; the caches
hold numbers only, keyed on the model, checkpoint and everything else that shapes them. Text and figures are built
per session. The sections below the fold are drawn only while open (`section_box`), and which are open is the
link's `open`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attnlab import links
from attnlab.figures import screen
from attnlab.figures.palette import current
from attnlab.links.lm import SECTIONS, SHIPPED, nearest, offered, settle_lm
from attnlab.lm import LanguageModel, Trace, allowed_models, extend, load, run_metrics, trace
from attnlab.lm.generation import Generation
from attnlab.lmlab.branching import Branching, alternatives, branch
from attnlab.lmlab.forming import LensGrid, Push, lens_grid, likeliest, pushes
from attnlab.lmlab.reading import Reading, Top, read, top_at, top_of
from attnlab.ui.app.i18n import current_lang, t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code, md_escape

LM = PageState("lm", links.params("lm"))
MODELS_KEPT = 16  # checkpoints a server keeps loaded (a shipped one is about 2.6 MB of float32)
READINGS_KEPT = 32  # texts whose readings a server keeps (each (L, H, T, T) weights and T losses)
GENERATIONS_KEPT = 256  # generations kept: one per character generated so far of each (text, temperature, seed)
TRACES_KEPT = 4  # texts whose residual stream a server keeps taken apart ((1 + 3L) x T x D float32 each)
READING_TRACE_BYTES = 4 * 2**20  # a reading keeps its pass's trace up to this size (the shipped runs' 0.7-0.9 MB at
# 256 characters); a larger model's lens and attribution take a pass of their own (`traced`)


@st.cache_resource(show_spinner=False, max_entries=MODELS_KEPT)
def model(name: str, step: int | None = None) -> LanguageModel:
    """A model at a checkpoint, loaded once per process and shared read-only (a ValueError or FileNotFoundError
    when it cannot be: not cached, so a fixed server retries)."""
    return load(name, step, allowed=None if name in SHIPPED else allowed_models())


@st.cache_resource(show_spinner=False, max_entries=READINGS_KEPT)
def reading(name: str, step: int | None, text: str) -> Reading:
    """One text through one checkpoint, shared by every session that reads it (read-only); with its pass's trace
    where that is small (the lens and the attribution then need no pass of their own)."""
    lm = model(name, step)
    cfg = lm.cfg
    size = 4 * (1 + 3 * cfg.num_hidden_layers) * lm.max_len * cfg.hidden_size  # a trace at the model's length
    return read(lm, text, keep_trace=size <= READING_TRACE_BYTES)


@st.cache_data(show_spinner=False, max_entries=256)
def top(name: str, step: int | None, ids: tuple[int, ...], position: int, how: tuple, _got: Reading) -> Top:
    """The ten likeliest next tokens after ids[0..position] and the sampler's distribution there, `how` being
    (temperature, top_k, top_p) (numbers and token texts only); after the whole text from the reading's own last
    logits (the reading of these ids: no second pass)."""
    lm = model(name, step)
    if position == len(ids) - 1:
        return top_of(lm, _got.last_logits, 10, *how)
    return top_at(lm, ids, position, 10, *how)


@st.cache_resource(show_spinner=False, max_entries=GENERATIONS_KEPT)
def generation(name: str, step: int | None, text: str, how: tuple, seed: int, n: int) -> Generation:
    """n characters after the text drawn as `how` (temperature, top_k, top_p) says, the last one step after the
    n - 1 before (read-only, shared)."""
    lm = model(name, step)
    temperature, top_k, top_p = how
    if n == 1:
        return lm.generate(text, 1, temperature, seed, top_k=top_k, top_p=top_p)
    return extend(lm, generation(name, step, text, how, seed, n - 1), 1, temperature, top_k, top_p)


@st.cache_resource(show_spinner=False, max_entries=TRACES_KEPT)
def traced(name: str, step: int | None, ids: tuple[int, ...]) -> Trace:
    """One pass over the ids with the residual stream taken apart (read-only, shared): the lens and the pushes."""
    return trace(model(name, step), ids)


def trace_of(name: str, step: int | None, got: Reading) -> Trace:
    """The reading's own trace, or (a model too large for a reading to keep one) a pass of its own."""
    return got.trace if got.trace is not None else traced(name, step, got.ids)


@st.cache_data(show_spinner=False, max_entries=READINGS_KEPT)
def lens_of(name: str, step: int | None, ids: tuple[int, ...], _got: Reading) -> LensGrid:
    """The logit lens of the ids (the reading `_got` of them), kept small: the likeliest token, its probability, the
    next token's rank."""
    return lens_grid(model(name, step), trace_of(name, step, _got), ids)


@st.cache_data(show_spinner=False, max_entries=256)
def pushes_of(
    name: str, step: int | None, ids: tuple[int, ...], position: int, token: int, _got: Reading
) -> tuple[list[Push], float]:
    """Every part's push on one token's logit at one position, and that logit (contract 19's attribution)."""
    return pushes(model(name, step), trace_of(name, step, _got), position, token)


@st.cache_data(show_spinner=False, max_entries=256)
def predicted_of(name: str, step: int | None, ids: tuple[int, ...], position: int, _got: Reading) -> int:
    """The id the model ranks first after ids[0..position]."""
    return likeliest(model(name, step), trace_of(name, step, _got), position)


@st.cache_resource(show_spinner=False, max_entries=32)
def branched(name: str, step: int | None, text: str, forced: str, temps: tuple, seed: int, cuts: tuple) -> Branching:
    """The text and the forced characters continued at three temperatures in one batch (read-only, shared)."""
    return branch(model(name, step), text, forced, temps, seed, *cuts)


def flip(name: str) -> None:
    """Open a closed section or close an open one (a switch's callback)."""
    now = set(LM["open"]) ^ {name}
    LM["open"] = [s for s in SECTIONS if s in now]


@st.cache_data(show_spinner=False, max_entries=64)
def alternatives_of(name: str, step: int | None, prefix: str) -> list[tuple[int, str, float]]:
    """The model's five likeliest next tokens after a prefix (ids, texts, probabilities; numbers only)."""
    return alternatives(model(name, step), prefix)


def section_box(name: str, label: str, icon: str):
    """An expander for one section below the fold, open as the link's `open` says; opening or closing it writes
    the link (a closed section draws nothing)."""
    key = f"lm.open_{name}"
    st.session_state[key] = name in LM["open"]
    return st.expander(label, key=key, on_change=flip, args=(name,), icon=icon)


def section_switch(name: str, label: str, help: str) -> bool:
    """A switch for one section drawn inside another, kept in the link's `open` as `section_box` keeps its own."""
    key = f"lm.open_{name}"
    st.session_state[key] = name in LM["open"]
    return st.toggle(label, key=key, on_change=flip, args=(name,), help=help)


def open_section(name: str) -> None:
    """Open one section (a click elsewhere that leads there)."""
    LM["open"] = [s for s in SECTIONS if s in {*LM["open"], name}]


def cuts(say: bool = True) -> tuple[int | None, float | None]:
    """The top-k and top-p the sampler uses: what was typed, or no cut where it cannot be (said where `say`, the box
    kept as typed)."""
    top_k, top_p = LM["top_k"], LM["top_p"]
    if top_k is not None and top_k < 1:
        if say:
            st.warning(t("lm.top_k_bad", typed=f"{top_k:g}"), icon=":material/warning:")
        top_k = None
    if top_p is not None and not 0 < top_p <= 1:
        if say:
            st.warning(t("lm.top_p_bad", typed=f"{top_p:g}"), icon=":material/warning:")
        top_p = None
    return (None if top_k is None else int(top_k)), top_p


@st.cache_data(show_spinner=False, max_entries=MODELS_KEPT)
def run_metrics_of(folder: str) -> dict | None:
    """A run folder's metrics.json (numbers and the corpus's names), None for a folder that is no training run."""
    try:
        return run_metrics(folder)
    except FileNotFoundError:
        return None


def run_numbers(lm: LanguageModel) -> dict | None:
    """The loaded model's run metrics, where it is a run (the shipped ones, or a folder a training run wrote)."""
    return run_metrics_of(str(lm.folder)) if lm.folder is not None else None


def settle(first: bool) -> None:
    """On a session's first load: the model of the link's language when it names none, its first text when the
    link has none; a model this server does not offer is replaced and said."""
    if not first:
        return
    v = {"model": LM["model"], "lang": current_lang()}
    v["text"] = LM["text"]
    for name, raw, used, reason in settle_lm(v, dict(st.query_params)):
        LM.add_problem(f"lm.url_{reason}", asked=f"{name}={raw}", used=used, options=", ".join(offered()))
    LM["model"], LM["text"] = v["model"], v["text"]


def loaded() -> LanguageModel | None:
    """The chosen model at its last checkpoint (for its checkpoints and shape), or a message saying why not."""
    name = LM["model"]
    try:
        if name in SHIPPED:
            return model(name)
        with st.spinner(t("lm.loading", name=md_escape(name))):  # a Hub model is fetched on its first use
            return model(name)
    except FileNotFoundError:
        st.error(t("lm.run_missing", name=code(name)), icon=":material/error:")
    except ValueError as refused:
        st.error(t("lm.refused", name=code(name)), icon=":material/error:")
        st.caption(t("common.library_said", detail=code(str(refused), 300)))
    return None


def fit(first: bool, lm: LanguageModel) -> int | None:
    """The checkpoint on screen (None: a model with no checkpoints); on a first load, a layer, head or step the
    model does not have is replaced and said."""
    if first:
        LM.rebound("layer", lm.n_layers)
        LM.rebound("head", lm.n_heads)
    LM["layer"], LM["head"] = min(LM["layer"], lm.n_layers), min(LM["head"], lm.n_heads)  # after a model switch
    if not lm.steps:
        return None
    asked = LM["step"]
    LM["step"] = nearest(lm.steps, asked)
    if first and asked not in (LM["step"], LM.params["step"].default):
        LM.add_problem("lm.not_checkpoint", asked=f"step={asked}", used=LM["step"])
    return LM["step"]


def fit_query(first: bool, step: int | None) -> None:
    """A picked position past the text (a link made for a longer one) is after the whole text: said on a first load."""
    text = LM["text"]
    if LM["q"] == 0 or not text.strip():
        return
    n = reading(LM["model"], step, text).n_tokens
    if LM["q"] > n - 1:
        if first:
            LM.add_problem("lm.q_past_text", asked=f"q={LM['q']}", n=n - 1, used=0)
        LM["q"] = 0


def memo(name: str, inputs: tuple, build: Callable[[], Any]) -> Any:
    """A figure this session built for the same inputs, language, palette and chart width (one kept per name; never
    shared between sessions): the text-independent sections cost their numbers' lookup, not a new figure, on a
    rerun."""
    store = st.session_state.setdefault("lm._figures", {})
    key = (inputs, current_lang(), current().name, screen.width())
    if name not in store or store[name][0] != key:
        store[name] = (key, build())
    return store[name][1]


def read_or_say(step: int | None) -> Reading | None:
    """The text's reading, or a message in the user's language; the typed text stays in its box."""
    text = LM["text"]
    if not text.strip():
        st.info(t("lm.empty"), icon=":material/edit:")
        return None
    got = reading(LM["model"], step, text)
    if got.unknown:
        shown = " ".join(code(c, 8) for c in got.unknown[:12])
        st.warning(t("lm.unknown", n=len(got.unknown), chars=shown), icon=":material/translate:")
    if got.cut:
        st.warning(t("lm.cut", n=got.cut, cap=got.n_tokens - got.lead), icon=":material/content_cut:")
    return got
