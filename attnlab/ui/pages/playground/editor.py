"""The Playground's own panels: the check against PyTorch and the cell-by-cell weight editor with its files."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attnlab.labcheck import check_against_torch
from attnlab.limits import MAX_D_MODEL, MAX_UPLOAD_MB, MAX_URL_EDITS, MAX_WEIGHT
from attnlab.multihead import NAMES
from attnlab.params import divisors
from attnlab.pipeline import LabResult, seeded_weights
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code, markdown_table
from attnlab.ui.parts.lab import (
    CELL_PROBLEMS,
    EDITS,
    HEADS_SEEN,
    LAB,
    SYMBOL,
    UPLOAD_PROBLEM,
    VERSION,
    config,
    editor_cells,
)
from attnlab.weights_io import WeightsError, edits_between, load_weights, to_json


def check_panel(result: LabResult) -> None:
    """Our numbers against PyTorch's, per head (SDPA, and FlexAttention for modern settings) and after W_O."""
    box = st.sidebar.container(border=True)
    box.markdown(f"**{t('lab.check_title')}**")
    modern = result.config is not None and result.config.modern
    flex = modern and box.toggle(t("lab.check_flex"), key="lab.check_flex", help=t("lab.check_flex_help"))
    check = check_against_torch(result, flex=flex)
    verdict = t("lab.check_pass") if check.passed else t("lab.check_fail")
    icon = ":material/check_circle:" if check.passed else ":material/error:"
    (box.success if check.passed else box.error)(verdict, icon=icon)
    rows = [(f"{t('lab.check_head', h=h + 1)} ↔ SDPA", err) for h, err in enumerate(check.sdpa_per_head)]
    rows += [(f"{t('lab.check_head', h=h + 1)} ↔ Flex", err) for h, err in enumerate(check.flex_per_head or [])]
    rows.append(("W_O ↔ MHA" if check.after == "mha" else "W_O ↔ SDPA · W_O", check.mha))
    box.markdown(markdown_table((t("lab.check_where"), "max |Δ|"), [(where, f"{err:.1e}") for where, err in rows]))
    box.caption(t("lab.check_caption", tol=f"{check.tolerance:.0e}"))
    if modern:
        box.caption(t(f"lab.check_modern_{check.after}"))
    if check.flex_error:
        box.caption(t("lab.check_flex_failed", why=code(check.flex_error, 200)))
    st.caption(f"{icon} {verdict} · max |Δ| = {check.worst:.1e} ({t('lab.check_where_more')})")


def editor_views(heads: int) -> dict[str, str]:
    """Editor views: the whole matrix, or the part one head owns."""
    return {"all": t("lab.editor_all")} | {str(h): t("lab.check_head", h=h + 1) for h in range(heads)}


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
    rows, cols = editor_cells(name, view, d_model, heads, result.steps.n_kv_heads)
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
    group = weights.d_model // weights.d_kv  # query heads per key/value head the file's W_K and W_V imply
    if LAB["heads"] % group:  # the largest head count that splits d_model and holds whole groups
        LAB["heads"] = max(
            (h for h in divisors(weights.d_model) if h % group == 0 and h <= LAB["heads"]), default=group
        )
    LAB["kv_heads"], st.session_state[HEADS_SEEN] = LAB["heads"] // group, LAB["heads"]
    base = seeded_weights(replace(config(), d_model=weights.d_model, edits=()))
    st.session_state[EDITS] = edits_between(base, weights)
    st.session_state[CELL_PROBLEMS] = []
    st.session_state[VERSION] += 1
