"""The Playground's shared state and controls: text, sizes, seed, mask, and the weight editor.

The Playground, Multi-head and Neuron pages all read the same `lab.*` state (`LAB`), so a number
on one page can be traced on another, and every one of them puts it in the URL (contract 4).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attnlab.limits import MAX_D_MODEL, MAX_SEED, MAX_TOKENS, MAX_UPLOAD_MB, MAX_URL_EDITS, MAX_WEIGHT, MIN_D_MODEL
from attnlab.multihead import NAMES
from attnlab.params import bool_param, choice_param, int_param, text_param
from attnlab.pipeline import (
    LabConfig,
    LabResult,
    check_against_torch,
    decode_edits,
    encode_edits,
    merge_editor_changes,
    run_lab,
    seeded_weights,
)
from attnlab.tokens import tokenize
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.stages import head_options
from attnlab.ui.state import PageState
from attnlab.ui.text import code, markdown_table
from attnlab.ui.widgets import segmented, size_inputs, text_input, toggle
from attnlab.weights_io import WeightsError, edits_between, load_weights, to_json

DEFAULT = LabConfig()
INITS = ("random", "identity", "zeros")
LAB = PageState(
    "lab",
    (
        text_param("text", DEFAULT.text),
        int_param("d_model", DEFAULT.d_model, MIN_D_MODEL, MAX_D_MODEL),
        int_param("heads", DEFAULT.heads, 1, MAX_D_MODEL),
        bool_param("causal", DEFAULT.causal),
        int_param("seed", DEFAULT.seed, 0, MAX_SEED),
        choice_param("init", DEFAULT.init, INITS),
        bool_param("pe", DEFAULT.positions),
        int_param("head", 0, 1 - MAX_D_MODEL, MAX_D_MODEL),  # 0 or -g: a group of heads side by side; h: head h
    ),
)
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


def check_panel(result: LabResult) -> None:
    """Our numbers against PyTorch's, per head and after W_O, always in the sidebar."""
    check = check_against_torch(result, LAB["causal"])
    box = st.sidebar.container(border=True)
    box.markdown(f"**{t('lab.check_title')}**")
    verdict = t("lab.check_pass") if check.passed else t("lab.check_fail")
    icon = ":material/check_circle:" if check.passed else ":material/error:"
    (box.success if check.passed else box.error)(verdict, icon=icon)
    rows = [(f"{t('lab.check_head', h=h + 1)} ↔ SDPA", err) for h, err in enumerate(check.sdpa_per_head)]
    rows.append(("W_O ↔ MHA", check.mha))
    box.markdown(markdown_table((t("lab.check_where"), "max |Δ|"), [(where, f"{err:.1e}") for where, err in rows]))
    box.caption(t("lab.check_caption", tol=f"{check.tolerance:.0e}"))
    st.caption(f"{icon} {verdict} · max |Δ| = {check.worst:.1e} ({t('lab.check_where_more')})")


def editor_views(heads: int) -> dict[str, str]:
    """Editor views: the whole matrix, or the part one head owns."""
    return {"all": t("lab.editor_all")} | {str(h): t("lab.check_head", h=h + 1) for h in range(heads)}


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


def reset_edits() -> None:
    """Back to the seeded weights: no overrides, no refused cells, a fresh editor."""
    st.session_state[EDITS], st.session_state[CELL_PROBLEMS] = {}, []
    st.session_state[VERSION] += 1


def cell_problems() -> None:
    """Each refused cell by name, with what was typed shown as typed."""
    for problem in st.session_state.get(CELL_PROBLEMS) or []:
        cell = f"{SYMBOL[problem.name]}[{problem.row}, {problem.col}]"
        message = t(f"lab.{problem.reason}", cell=cell, raw=code(problem.raw, 30), cap=f"{MAX_WEIGHT:g}")
        st.error(message, icon=":material/block:")


def weights_editor(result: LabResult) -> None:
    """Edit W_Q, W_K, W_V, W_O cell by cell, behind a switch: the grid is built and sent only when it is open."""
    if st.session_state.get(CELL_PROBLEMS):
        st.session_state["lab.editor_open"] = True  # a refused cell is shown where it was typed
    if not st.toggle(t("lab.editor_title"), key="lab.editor_open"):
        return
    with st.container(border=True):
        editor_grid(result)
        weights_files(result)


def editor_grid(result: LabResult) -> None:
    """Which matrix and which part of it, the grid itself, and what the link can carry."""
    d_model, heads = result.weights.d_model, result.steps.n_heads
    st.caption(t("lab.editor_help", cap=f"{MAX_WEIGHT:g}"))
    left, right, reset = st.columns([2, 2, 1], vertical_alignment="bottom")
    name = (
        left.segmented_control(
            t("lab.editor_matrix"), NAMES, format_func=SYMBOL.get, key="lab.editor_matrix", required=True
        )
        or NAMES[0]
    )
    views = editor_views(heads)
    if st.session_state.get("lab.editor_view") not in views:
        st.session_state["lab.editor_view"] = "all"
    view = right.selectbox(t("lab.editor_view"), list(views), key="lab.editor_view", format_func=views.get)
    reset.button(t("lab.reset"), disabled=not st.session_state[EDITS], width="stretch", on_click=reset_edits)
    cell_problems()
    rows, cols = editor_cells(name, view, d_model, heads)
    matrix = result.weights.as_dict()[name].numpy()
    import pandas as pd  # only when the editor is open

    frame = pd.DataFrame(matrix[rows][:, cols], index=[f"d{r}" for r in rows], columns=[f"d{c}" for c in cols])
    st.data_editor(
        frame,
        key=f"lab.editor.{name}.{view}.{st.session_state[VERSION]}",
        column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in frame.columns},
    )
    n_edits = len(st.session_state[EDITS])
    if n_edits > MAX_URL_EDITS:
        st.info(t("lab.too_many_for_link", n=n_edits, cap=MAX_URL_EDITS), icon=":material/link_off:")
    elif n_edits:
        st.caption(t("lab.edited_cells", n=n_edits))


def weights_files(result: LabResult) -> None:
    """Download the current weights as JSON; upload JSON, .npz or safetensors (never a pickle)."""
    left, right = st.columns([1, 2], vertical_alignment="bottom")
    left.download_button(
        t("lab.download"),
        to_json(result.weights),
        file_name=f"attnlab-weights-d{result.weights.d_model}.json",
        mime="application/json",
        icon=":material/download:",
        width="stretch",
    )
    right.file_uploader(
        t("lab.upload", cap=MAX_D_MODEL),
        type=["json", "npz", "safetensors"],
        key="lab.upload",
        on_change=take_upload,
        max_upload_size=MAX_UPLOAD_MB,
        help=t("lab.upload_help"),
    )
    refused: WeightsError | None = st.session_state.get(UPLOAD_PROBLEM)
    if refused is not None:
        fields = {name: code(value) for name, value in refused.fmt.items()}
        st.error(t(f"lab.upload_{refused.reason}", **fields), icon=":material/block:")
        detail = getattr(refused, "detail", None)
        if detail:
            st.caption(t("common.library_said", detail=code(detail, 200)))


def take_upload() -> None:
    """Replace the weights with an uploaded file: d_model follows the file, cells become overrides."""
    upload = st.session_state.get("lab.upload")
    st.session_state[UPLOAD_PROBLEM] = None
    if upload is None:
        return
    try:
        weights = load_weights(upload.name, upload.getvalue())
    except WeightsError as bad:
        st.session_state[UPLOAD_PROBLEM] = bad
        return
    LAB["d_model"] = weights.d_model
    LAB.fit_heads("d_model", "heads")
    base = seeded_weights(replace(config(), d_model=weights.d_model, edits=()))
    st.session_state[EDITS] = edits_between(base, weights)
    st.session_state[CELL_PROBLEMS] = []
    st.session_state[VERSION] += 1


def query_row(n_tokens: int) -> int | None:
    """The picked token chip's position, if it is inside the current text."""
    picked = st.session_state.get(QUERY)
    return picked if picked is not None and picked < n_tokens else None
