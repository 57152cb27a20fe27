"""Lesson: masking. The causal triangle on `<BOS> I like you <EOS>`, one parallel pass against T separate ones,
then -inf / -1e9 / finfo.min in float32, float16 and bfloat16, with a fully blocked row (NaN vs SDPA's 0)."""

import pandas as pd
import streamlit as st
import torch

from attnlab.figures import matrix_figure
from attnlab.lessons import masking as lesson
from attnlab.params import Param, choice, text
from attnlab.tokens import tokenize
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape

SCOPE = "lmask"
MAX_T = 12
FILL_KEY = {"-inf": "neg_inf", "-1e9": "neg_1e9", "min": "min"}
PARAMS = (
    Param("text", "<BOS> I like you <EOS>", text(500)),
    Param("blank", "last", choice(lesson.BLANK_ROWS, "last")),
    Param("dtype", "float16", choice(tuple(lesson.DTYPES), "float16")),
    Param("fill", "-1e9", choice(lesson.FILLS, "-1e9")),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


def fill_name(fill: str) -> str:
    return t(f"lesson_masking.fill_{FILL_KEY[fill]}")


def num(x: float) -> str:
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
    return lesson.fill_table(list(tokens), blank)


state.load(SCOPE, PARAMS)
st.title(t("lesson_masking.title"))
st.caption(t("lesson_masking.intro"))
state.show_problems(SCOPE)
st.text_input(
    t("lesson_masking.text"), key=K["text"], help=t("lesson_masking.text_help", cap=MAX_T), persist_state="session"
)
tokens = tokenize(st.session_state[K["text"]])
if len(tokens) > MAX_T:
    st.info(t("lesson_masking.too_many", n=len(tokens), cap=MAX_T), icon=":material/content_cut:")
    tokens = tokens[:MAX_T]

# 1. causal rows -------------------------------------------------------------------------------------
st.subheader(t("lesson_masking.causal_title"))
st.markdown(t("lesson_masking.causal_body"))
st.latex(
    r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}, \qquad "
    r"A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right)"
)
if not tokens:
    st.info(t("lesson_masking.empty"), icon=":material/edit:")
else:
    check = lesson.parallel_vs_sequential(tokens)
    n = len(tokens)
    left, right = st.columns([3, 2])
    with left:
        shown = check.weights.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
        chart(
            matrix_figure(
                shown.numpy(),
                tokens,
                tokens,
                kind="prob",
                title=t("lesson_masking.weights_chart"),
                blocked_text=t("lesson_masking.masked"),
            ),
            key="lmask.chart.weights",
        )
    with right:
        worst = max(check.row_diff)
        st.metric(
            t("lesson_masking.parallel_metric", n=n),
            f"{worst:.2g}",
            help=t("lesson_masking.parallel_help", d=lesson.D_MODEL),
        )
        if worst < 1e-9:
            st.success(t("lesson_masking.parallel_ok", n=n), icon=":material/done_all:")
    rows = pd.DataFrame(
        {
            t("lesson_masking.col_pos"): list(range(n)),
            t("lesson_masking.col_token"): tokens,
            t("lesson_masking.col_sees"): [" ".join(v) for v in lesson.visible(tokens)],
            t("lesson_masking.col_next"): [*tokens[1:], "—"],
            t("lesson_masking.col_diff"): [f"{d:.2g}" for d in check.row_diff],
        }
    )
    st.dataframe(rows, hide_index=True, width="stretch")

# 2. -inf vs -1e9 ------------------------------------------------------------------------------------
st.subheader(t("lesson_masking.fill_title"))
st.markdown(t("lesson_masking.fill_body"))
cols = st.columns([2, 2, 2])
blank_labels = {b: t(f"lesson_masking.blank_{b}") for b in lesson.BLANK_ROWS}
cols[0].selectbox(
    t("lesson_masking.blank"),
    lesson.BLANK_ROWS,
    key=K["blank"],
    format_func=blank_labels.get,
    help=t("lesson_masking.blank_help"),
    persist_state="session",
)
cols[1].segmented_control(
    t("lesson_masking.dtype"), tuple(lesson.DTYPES), key=K["dtype"], required=True, persist_state="session"
)
cols[2].segmented_control(
    t("lesson_masking.fill"),
    lesson.FILLS,
    key=K["fill"],
    required=True,
    format_func={f: fill_name(f) for f in lesson.FILLS}.get,
    persist_state="session",
)
state.save(SCOPE, PARAMS)
if tokens:
    blank, dtype, fill = (st.session_state[K[k]] for k in ("blank", "dtype", "fill"))
    table = fill_table(tuple(tokens), blank)
    pick = next(r for r in table if r.dtype == dtype and r.fill == fill)
    n = len(tokens)
    m = st.columns(4)
    m[0].metric(t("lesson_masking.stored"), num(pick.stored), help=t("lesson_masking.stored_help", dtype=dtype))
    if pick.error:
        st.error(t("lesson_masking.refused", error=md_escape(pick.error)), icon=":material/block:")
        st.caption(t("lesson_masking.refused_note"))
    else:
        m[1].metric(
            t("lesson_masking.visible_err"), f"{pick.allowed_err:.2g}", help=t("lesson_masking.visible_err_help")
        )
        m[2].metric(t("lesson_masking.blank_naive"), row_text(pick.blank_row, n))
        m[3].metric(t("lesson_masking.blank_sdpa"), row_text(pick.sdpa_blank_row, n))
        kind, _ = lesson.row_kind(pick.blank_row)
        verdict = {"nan": "verdict_nan", "uniform": "verdict_uniform"}.get(kind, "verdict_none")
        (st.info if verdict == "verdict_none" else st.warning)(
            t(f"lesson_masking.{verdict}"), icon=":material/visibility_off:"
        )
    st.markdown(f"**{t('lesson_masking.table_title')}**")
    st.dataframe(
        pd.DataFrame(
            {
                t("lesson_masking.col_dtype"): [r.dtype for r in table],
                t("lesson_masking.col_fill"): [fill_name(r.fill) for r in table],
                t("lesson_masking.col_stored"): [num(r.stored) for r in table],
                t("lesson_masking.col_err"): ["—" if r.error else f"{r.allowed_err:.2g}" for r in table],
                t("lesson_masking.col_naive"): [row_text(r.blank_row, n, bool(r.error)) for r in table],
                t("lesson_masking.col_sdpa"): [row_text(r.sdpa_blank_row, n, bool(r.error)) for r in table],
            }
        ),
        hide_index=True,
        width="stretch",
    )
