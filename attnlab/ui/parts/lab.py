"""The Playground's shared state and controls: text, sizes, seed, mask, and the weight editor.

The Playground, Multi-head and Neuron pages all read the same `lab.*` state (`LAB`), so a number
on one page can be traced on another, and every one of them puts it in the URL (contract 4).
"""

from __future__ import annotations

import streamlit as st

from attnlab import links
from attnlab.limits import MAX_TOKENS, MAX_URL_EDITS
from attnlab.pipeline import (
    LabConfig,
    LabResult,
    decode_edits,
    encode_edits,
    merge_editor_changes,
    run_lab,
)
from attnlab.tokens import tokenize
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import segmented, size_inputs, text_input, toggle
from attnlab.ui.parts.stages import head_options

DEFAULT = LabConfig()
INITS = links.INITS
LAB = PageState("lab", links.params("lab"))
EDITS, VERSION, CELL_PROBLEMS = "lab.edits", "lab.edits_version", "lab.cell_problems"
UPLOAD_PROBLEM = "lab.upload_problem"
QUERY = "lab.query"  # the token chip picked on the Playground (its row is outlined; the Neuron view opens it)
SYMBOL = {"w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O"}


def load() -> bool:
    """Read the URL once per session, then make heads divide d_model (saying so); True on the first load."""
    first = LAB.load()
    state.adopt([QUERY])  # the picked token chip travels with the Playground's state
    if first:
        edits, bad = decode_edits(st.query_params.get("edits", ""), LAB["d_model"])
        st.session_state[EDITS] = edits
        if bad:
            LAB.add_problem("lab.url_bad_edits", items="; ".join(bad))
    st.session_state.setdefault(EDITS, {})
    st.session_state.setdefault(VERSION, 0)
    LAB.heads_must_divide("d_model", "heads", first)
    heads_on_screen_must_exist(first)
    take_editor_changes()
    return first


def heads_on_screen_must_exist(first: bool) -> None:
    """A link's `head` past the head count (or a group past the last) shows all heads instead, and says so."""
    n_tokens = min(len(tokenize(LAB["text"])), MAX_TOKENS)
    if LAB["head"] in head_options(LAB["heads"], n_tokens):
        return
    if first:
        LAB.add_problem("lab.url_head_missing", asked=f"head={LAB['head']}", heads=LAB["heads"])
    LAB["head"] = 0


def config() -> LabConfig:
    """The current settings as the pure pipeline's config."""
    v = LAB.values()
    edits = tuple(sorted(st.session_state[EDITS].items()))
    return LabConfig(v["text"], v["d_model"], v["heads"], v["causal"], v["seed"], v["init"], v["pe"], edits)


def save(*pages: PageState) -> None:
    """Put the settings (and the edited cells, when few enough for a link) plus other pages' state in the URL."""
    edits = st.session_state[EDITS]
    extra = {"edits": encode_edits(edits)} if 0 < len(edits) <= MAX_URL_EDITS else {}
    state.save(LAB, *pages, extra=extra)


def controls() -> None:
    """Text, sizes, seed, mask and start of the weights, laid out for wide and narrow screens."""
    text_input(LAB, "text", t("lab.text"), help=t("lab.text_help", cap=MAX_TOKENS))
    size_inputs(LAB, st.columns(3))
    cols = st.columns([2, 1, 1], vertical_alignment="center")
    labels = {v: t(f"lab.init_{v}") for v in INITS}
    segmented(LAB, "init", t("lab.init"), where=cols[0], labels=labels, help=t("lab.init_help"))
    toggle(LAB, "causal", t("lab.causal"), where=cols[1], help=t("lab.causal_help"))
    toggle(LAB, "pe", t("lab.pe"), where=cols[2], help=t("lab.pe_help"))


def text_status(result: LabResult) -> bool:
    """Say when the text is empty or over the cap; False when there is nothing to compute."""
    if not result.tokens:
        st.info(t("lab.empty_text"), icon=":material/edit:")
        return False
    if result.n_tokens_typed > len(result.tokens):
        st.warning(t("lab.too_many_tokens", n=result.n_tokens_typed, cap=MAX_TOKENS), icon=":material/content_cut:")
    return True


def compute() -> LabResult:
    """Run the pipeline for the current settings."""
    return run_lab(config())


def editor_cells(name: str, view: str, d_model: int, heads: int) -> tuple[list[int], list[int]]:
    """Rows and columns of a matrix shown in one editor view (W_O's head part is rows, others columns)."""
    every = list(range(d_model))
    if view == "all":
        return every, every
    d_k = d_model // heads
    part = list(range(int(view) * d_k, (int(view) + 1) * d_k))
    return (part, every) if name == "w_o" else (every, part)


def take_editor_changes() -> None:
    """Fold cells typed into the editor into the overrides, before anything is computed."""
    version = st.session_state[VERSION]
    d_model, heads = LAB["d_model"], LAB["heads"]
    prefix, suffix = "lab.editor.", f".{version}"
    for widget_key in [k for k in st.session_state if k.startswith(prefix) and k.endswith(suffix)]:
        edited = (st.session_state[widget_key] or {}).get("edited_rows") or {}
        if not edited:
            continue
        _, _, name, view, _ = widget_key.split(".")
        if view != "all" and int(view) >= heads:
            continue
        rows, cols = editor_cells(name, view, d_model, heads)
        edits, problems = merge_editor_changes(st.session_state[EDITS], name, edited, rows, {f"d{c}": c for c in cols})
        st.session_state[EDITS] = edits
        st.session_state[CELL_PROBLEMS] = problems
        st.session_state[VERSION] = version + 1


def query_row(n_tokens: int) -> int | None:
    """The picked token chip's position, if it is inside the current text."""
    picked = st.session_state.get(QUERY)
    return picked if picked is not None and picked < n_tokens else None
