"""The Playground's shared state and controls: text, sizes, seed, mask, and the weight editor.

The Playground, Multi-head and Neuron pages all read the same `lab.*` state, so a number on
one page can be traced on another, and every one of them puts it in the URL (contract 4).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from attnlab.limits import MAX_D_MODEL, MAX_SEED, MAX_TEXT_CHARS, MAX_TOKENS, MAX_URL_EDITS
from attnlab.multihead import NAMES
from attnlab.params import Param, boolean, choice, dump_bool, int_in, text
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
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import keep_choice, size_inputs
from attnlab.weights_io import WeightsError, edits_between, load_weights, to_json

SCOPE = "lab"
DEFAULT = LabConfig()
INITS = ("random", "identity", "zeros")
PARAMS = (
    Param("text", DEFAULT.text, text(MAX_TEXT_CHARS)),
    Param("d_model", DEFAULT.d_model, int_in(2, MAX_D_MODEL, DEFAULT.d_model)),
    Param("heads", DEFAULT.heads, int_in(1, MAX_D_MODEL, DEFAULT.heads)),
    Param("causal", DEFAULT.causal, boolean(DEFAULT.causal), dump_bool),
    Param("seed", DEFAULT.seed, int_in(0, MAX_SEED, DEFAULT.seed)),
    Param("init", DEFAULT.init, choice(INITS, DEFAULT.init)),
    Param("pe", DEFAULT.positions, boolean(DEFAULT.positions), dump_bool),
    Param("head", 0, int_in(0, MAX_D_MODEL, 0)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}
EDITS, VERSION, CELL_PROBLEMS = "lab.edits", "lab.edits_version", "lab.cell_problems"
UPLOAD_PROBLEM = "lab.upload_problem"
SYMBOL = {"w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O"}


def load() -> None:
    """Read the URL once per session, then make heads divide d_model (saying so if it did not)."""
    first = not st.session_state.get(f"_loaded.{SCOPE}")
    state.load(SCOPE, PARAMS)
    if first:
        edits, bad = decode_edits(st.query_params.get("edits", ""), st.session_state[K["d_model"]])
        st.session_state[EDITS] = edits
        if bad:
            state.add_problem(SCOPE, t("lab.url_bad_edits", items=", ".join(bad)))
    st.session_state.setdefault(EDITS, {})
    st.session_state.setdefault(VERSION, 0)
    state.heads_must_divide(SCOPE, K["d_model"], K["heads"], "heads", first)
    take_editor_changes()


def config() -> LabConfig:
    """The current settings as the pure pipeline's config."""
    v = state.values(SCOPE, PARAMS)
    edits = tuple(sorted(st.session_state[EDITS].items()))
    return LabConfig(v["text"], v["d_model"], v["heads"], v["causal"], v["seed"], v["init"], v["pe"], edits)


def save(extra: dict[str, str] | None = None) -> None:
    """Put the settings (and the edited cells, when few enough for a link) plus `extra` in the URL."""
    edits = st.session_state[EDITS]
    query = dict(extra or {})
    if 0 < len(edits) <= MAX_URL_EDITS:
        query["edits"] = encode_edits(edits)
    state.save(SCOPE, PARAMS, query)


def controls() -> None:
    """Text, sizes, seed, mask and start of the weights, laid out for wide and narrow screens."""
    st.text_input(t("lab.text"), key=K["text"], help=t("lab.text_help", cap=MAX_TOKENS), persist_state="session")
    size_inputs(st.columns(3), K["d_model"], K["heads"], K["seed"], MAX_D_MODEL, MAX_SEED)
    keep_choice(K["init"], INITS, DEFAULT.init)
    cols = st.columns([2, 1, 1], vertical_alignment="center")
    cols[0].segmented_control(
        t("lab.init"),
        INITS,
        format_func={v: t(f"lab.init_{v}") for v in INITS}.get,
        key=K["init"],
        required=True,
        help=t("lab.init_help"),
        persist_state="session",
    )
    cols[1].toggle(t("lab.causal"), key=K["causal"], help=t("lab.causal_help"), persist_state="session")
    cols[2].toggle(t("lab.pe"), key=K["pe"], help=t("lab.pe_help"), persist_state="session")


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
    check = check_against_torch(result, st.session_state[K["causal"]])
    box = st.sidebar.container(border=True)
    box.markdown(f"**{t('lab.check_title')}**")
    verdict = t("lab.check_pass") if check.passed else t("lab.check_fail")
    if check.passed:
        box.success(verdict, icon=":material/check_circle:")
    else:
        box.error(verdict, icon=":material/error:")
    rows = [(f"{t('lab.check_head', h=h + 1)} ↔ SDPA", err) for h, err in enumerate(check.sdpa_per_head)]
    rows.append(("W_O ↔ MHA", check.mha))
    frame = pd.DataFrame([(where, f"{err:.1e}") for where, err in rows], columns=[t("lab.check_where"), "max |Δ|"])
    box.dataframe(frame, hide_index=True, width="stretch")
    box.caption(t("lab.check_caption", tol=f"{check.tolerance:.0e}"))
    worst = max(check.sdpa_per_head + [check.mha])
    icon = ":material/check_circle:" if check.passed else ":material/error:"
    st.caption(f"{icon} {verdict} · max |Δ| = {worst:.1e} ({t('lab.check_where_more')})")


def _slices(d_model: int, heads: int) -> list[str]:
    """Editor views: the whole matrix, or the part one head owns."""
    return ["all"] + [str(h) for h in range(heads)]


def _editor_cells(name: str, view: str, d_model: int, heads: int) -> tuple[list[int], list[int]]:
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
    d_model, heads = st.session_state[K["d_model"]], st.session_state[K["heads"]]
    prefix, suffix = "lab.editor.", f".{version}"
    for widget_key in [k for k in st.session_state if k.startswith(prefix) and k.endswith(suffix)]:
        edited = (st.session_state[widget_key] or {}).get("edited_rows") or {}
        if not edited:
            continue
        _, _, name, view, _ = widget_key.split(".")
        if view != "all" and int(view) >= heads:
            continue
        rows, cols = _editor_cells(name, view, d_model, heads)
        edits, problems = merge_editor_changes(st.session_state[EDITS], name, edited, rows, {f"d{c}": c for c in cols})
        st.session_state[EDITS] = edits
        st.session_state[CELL_PROBLEMS] = problems
        st.session_state[VERSION] = version + 1


def weights_editor(result: LabResult) -> None:
    """Edit W_Q, W_K, W_V, W_O cell by cell; refused cells are named and keep their value."""
    d_model, heads = result.weights.d_model, result.steps.n_heads
    with st.expander(t("lab.editor_title"), expanded=bool(st.session_state.get(CELL_PROBLEMS))):
        st.caption(t("lab.editor_help", cap="1000"))
        left, right, reset = st.columns([2, 2, 1], vertical_alignment="bottom")
        keep_choice("lab.editor_matrix", NAMES, "w_q")
        name = left.segmented_control(
            t("lab.editor_matrix"),
            NAMES,
            format_func=SYMBOL.get,
            key="lab.editor_matrix",
            required=True,
            persist_state="session",
        )
        views = _slices(d_model, heads)
        if st.session_state.get("lab.editor_view") not in views:
            st.session_state["lab.editor_view"] = "all"
        view = right.selectbox(
            t("lab.editor_view"),
            views,
            key="lab.editor_view",
            format_func={
                v: t("lab.editor_all") if v == "all" else t("lab.check_head", h=int(v) + 1) for v in views
            }.get,
        )
        if reset.button(t("lab.reset"), disabled=not st.session_state[EDITS], width="stretch"):
            st.session_state[EDITS], st.session_state[CELL_PROBLEMS] = {}, []
            st.session_state[VERSION] += 1
            st.rerun()
        for problem in st.session_state.get(CELL_PROBLEMS) or []:
            st.error(
                t(
                    f"lab.{problem.reason}",
                    cell=f"{SYMBOL[problem.name]}[{problem.row}, {problem.col}]",
                    raw=problem.raw[:30],
                    cap="1000",
                ),
                icon=":material/block:",
            )
        rows, cols = _editor_cells(name, view, d_model, heads)
        matrix = result.weights.as_dict()[name].numpy()
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
        weights_files(result)


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
        help=t("lab.upload_help"),
    )
    problem = st.session_state.get(UPLOAD_PROBLEM)
    if problem:
        reason, fmt = problem
        st.error(t(f"lab.upload_{reason}", **fmt), icon=":material/block:")


def take_upload() -> None:
    """Replace the weights with an uploaded file: d_model follows the file, cells become overrides."""
    upload = st.session_state.get("lab.upload")
    st.session_state[UPLOAD_PROBLEM] = None
    if upload is None:
        return
    try:
        weights = load_weights(upload.name, upload.getvalue())
    except WeightsError as bad:
        st.session_state[UPLOAD_PROBLEM] = (bad.reason, bad.fmt)
        return
    st.session_state[K["d_model"]] = weights.d_model
    state.fit_heads(K["d_model"], K["heads"])
    base = seeded_weights(replace(config(), d_model=weights.d_model, edits=()))
    st.session_state[EDITS] = edits_between(base, weights)
    st.session_state[CELL_PROBLEMS] = []
    st.session_state[VERSION] += 1
