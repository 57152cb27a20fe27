"""The masking lesson's sections: the causal triangle row by row, one pass against T, the fill values, empty rows."""

import pandas as pd
import streamlit as st

from attnlab import links
from attnlab.figures import matrix_figure
from attnlab.figures.screen import share as screen_share
from attnlab.lessons import masking as lesson
from attnlab.limits import MAX_MASKING_TOKENS
from attnlab.tokens import tokenize
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, segmented, selectbox, text_input

FILL_KEY = {"-inf": "neg_inf", "-1e9": "neg_1e9", "min": "min"}
PAGE = PageState("lmask", links.params("lmask"))


def fill_name(fill: str) -> str:
    """A fill value as the page names it."""
    return t(f"lesson_masking.fill_{FILL_KEY[fill]}")


def num(x: float) -> str:
    """A stored fill value, exactly enough to see what the dtype did to it."""
    return f"{x:.10g}"


def row_text(row: list[float] | None, n: int, refused: bool = False) -> str:
    """A blocked row summed up in words: NaN, all 0, or w each."""
    if refused:
        return t("lesson_masking.kind_refused")
    kind, w = lesson.row_kind(row)
    if kind == "uniform":
        return t("lesson_masking.kind_uniform", w=f"{w:.4g}", t=n)
    return t(f"lesson_masking.kind_{kind}")


@st.cache_data(max_entries=64, show_spinner=False)
def fill_table(tokens: tuple[str, ...], blank: str) -> list[lesson.FillResult]:
    """Every dtype x fill for these tokens, once per (tokens, blank row) for the whole server."""
    return lesson.fill_table(list(tokens), blank)


def sequence() -> list[str]:
    """The tokens typed, cut to the lesson's size (and said)."""
    text_input(PAGE, "text", t("lesson_masking.text"), help=t("lesson_masking.text_help", cap=MAX_MASKING_TOKENS))
    tokens = tokenize(PAGE["text"])
    if len(tokens) > MAX_MASKING_TOKENS:
        st.info(t("lesson_masking.too_many", n=len(tokens), cap=MAX_MASKING_TOKENS), icon=":material/content_cut:")
    return tokens[:MAX_MASKING_TOKENS]


def causal_rows(tokens: list[str]) -> None:
    """1. One row per prediction: the causal weights, and one pass against T separate prefix passes."""
    st.subheader(t("lesson_masking.causal_title"))
    st.markdown(t("lesson_masking.causal_body"))
    latex.show(
        r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}, \qquad "
        r"A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right)"
    )
    if not tokens:
        st.info(t("lesson_masking.empty"), icon=":material/edit:")
        return
    check, n = lesson.parallel_vs_sequential(tokens), len(tokens)
    left, right = st.columns([3, 2])
    with left, screen_share(3 / 5):  # the chart laid out for its column
        fig = matrix_figure(
            check.drawn_weights.numpy(),
            tokens,
            tokens,
            kind="prob",
            title=t("lesson_masking.weights_chart"),
            blocked_text=t("lesson_masking.masked"),
        )
        chart(fig, key="lmask.chart.weights")
    with right:
        worst = max(check.row_diff)
        help_text = t("lesson_masking.parallel_help", d=lesson.D_MODEL)
        st.metric(t("lesson_masking.parallel_metric", n=n), f"{worst:.2g}", help=help_text)
        if worst < 1e-9:
            st.success(t("lesson_masking.parallel_ok", n=n), icon=":material/done_all:")
    rows = {
        "col_pos": list(range(n)),
        "col_token": tokens,
        "col_sees": [" ".join(v) for v in lesson.visible(tokens)],
        "col_next": [*tokens[1:], "—"],
        "col_diff": [f"{d:.2g}" for d in check.row_diff],
    }
    frame = pd.DataFrame({t(f"lesson_masking.{key}"): column for key, column in rows.items()})
    with fold.section(PAGE, "rows", t("lesson_masking.rows_title"), icon=":material/table:") as drawn:
        if drawn:  # folded until opened: a data grid's scripts cost a phone's first visit more than a chart
            st.dataframe(frame, hide_index=True, width="stretch")


def fill_controls() -> None:
    """Which row to block entirely, the dtype and the fill value."""
    cols = st.columns([2, 2, 2])
    labels = {b: t(f"lesson_masking.blank_{b}") for b in lesson.BLANK_ROWS}
    help_text = t("lesson_masking.blank_help")
    selectbox(PAGE, "blank", t("lesson_masking.blank"), where=cols[0], labels=labels, help=help_text)
    segmented(PAGE, "dtype", t("lesson_masking.dtype"), where=cols[1])
    segmented(PAGE, "fill", t("lesson_masking.fill"), where=cols[2], labels={f: fill_name(f) for f in lesson.FILLS})


def chosen_fill(pick: lesson.FillResult, n: int) -> None:
    """The chosen dtype and fill: what was stored, and what a fully blocked row becomes."""
    m = st.columns(4)
    m[0].metric(t("lesson_masking.stored"), num(pick.stored), help=t("lesson_masking.stored_help", dtype=pick.dtype))
    if pick.error:
        st.error(t("lesson_masking.refused", dtype=pick.dtype), icon=":material/block:")
        st.caption(t("common.library_said", detail=code(pick.error, 200)))
        st.caption(t("lesson_masking.refused_note"))
        return
    help_text = t("lesson_masking.visible_err_help")
    m[1].metric(t("lesson_masking.visible_err"), f"{pick.allowed_err:.2g}", help=help_text)
    m[2].metric(t("lesson_masking.blank_naive"), row_text(pick.blank_row, n))
    m[3].metric(t("lesson_masking.blank_sdpa"), row_text(pick.sdpa_blank_row, n))
    kind, _ = lesson.row_kind(pick.blank_row)
    verdict = {"nan": "verdict_nan", "uniform": "verdict_uniform"}.get(kind, "verdict_none")
    say = st.info if verdict == "verdict_none" else st.warning
    say(t(f"lesson_masking.{verdict}"), icon=":material/visibility_off:")


def fill_values_table(table: list[lesson.FillResult], n: int) -> None:
    """Every dtype and fill side by side, folded until opened (see `causal_rows`)."""
    with fold.section(PAGE, "fills", t("lesson_masking.table_title"), icon=":material/table:") as drawn:
        if drawn:
            fill_rows(table, n)


def fill_rows(table: list[lesson.FillResult], n: int) -> None:
    """The table of every dtype and fill."""
    columns = {
        "col_dtype": [r.dtype for r in table],
        "col_fill": [fill_name(r.fill) for r in table],
        "col_stored": [num(r.stored) for r in table],
        "col_err": ["—" if r.error else f"{r.allowed_err:.2g}" for r in table],
        "col_naive": [row_text(r.blank_row, n, bool(r.error)) for r in table],
        "col_sdpa": [row_text(r.sdpa_blank_row, n, bool(r.error)) for r in table],
    }
    frame = pd.DataFrame({t(f"lesson_masking.{key}"): column for key, column in columns.items()})
    st.dataframe(frame, hide_index=True, width="stretch")


def fills(tokens: list[str]) -> None:
    """2. -inf or -1e9: every dtype x fill, and the chosen one in detail."""
    st.subheader(t("lesson_masking.fill_title"))
    st.markdown(t("lesson_masking.fill_body"))
    fill_controls()
    if not tokens:
        return
    table = fill_table(tuple(tokens), PAGE["blank"])
    chosen_fill(next(r for r in table if r.dtype == PAGE["dtype"] and r.fill == PAGE["fill"]), len(tokens))
    fill_values_table(table, len(tokens))
