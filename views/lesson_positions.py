"""Lesson: positions. Self-attention alone is permutation-equivariant (max diff ~1e-16 after un-shuffling);
sinusoidal positional encodings break that. Plus the PE heatmap and its exact values."""

import numpy as np
import pandas as pd
import streamlit as st

from attnlab.figures import dim_labels, matrix_figure
from attnlab.figures_lessons import pe_figure
from attnlab.lessons import positions as lesson
from attnlab.limits import MAX_SEED
from attnlab.params import Param, boolean, choice, dump_bool, int_in, text
from attnlab.tokens import tokenize
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape

SCOPE = "lpos"
MAX_T = 16
PARAMS = (
    Param("text", "the dog chased a cat", text(500)),
    Param("d_model", 8, int_in(2, 64, 8)),
    Param("seed", 0, int_in(0, MAX_SEED, 0)),
    Param("perm", "reverse", choice(lesson.PERMUTATIONS, "reverse")),
    Param("pe", False, boolean(False), dump_bool),
    Param("n_pos", 50, int_in(1, 256, 50)),
    Param("pe_d", 64, int_in(2, 128, 64)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


def sci(x: float) -> str:
    return f"{x:.3g}"


state.load(SCOPE, PARAMS)
st.title(t("lesson_positions.title"))
st.caption(t("lesson_positions.intro"))
state.show_problems(SCOPE)

# 1. shuffle -----------------------------------------------------------------------------------------
st.subheader(t("lesson_positions.shuffle_title"))
st.text_input(
    t("lesson_positions.text"), key=K["text"], help=t("lesson_positions.text_help", cap=MAX_T), persist_state="session"
)
cols = st.columns([1, 1, 2, 1.5], vertical_alignment="bottom")
cols[0].number_input(
    t("lesson_positions.d_model"),
    2,
    64,
    step=1,
    key=K["d_model"],
    help=t("lesson_positions.d_model_help"),
    persist_state="session",
)
cols[1].number_input(
    t("lesson_positions.seed"),
    0,
    MAX_SEED,
    step=1,
    key=K["seed"],
    help=t("lesson_positions.seed_help"),
    persist_state="session",
)
cols[2].selectbox(
    t("lesson_positions.perm"),
    lesson.PERMUTATIONS,
    key=K["perm"],
    format_func={p: t(f"lesson_positions.perm_{p}") for p in lesson.PERMUTATIONS}.get,
    persist_state="session",
)
cols[3].toggle(t("lesson_positions.pe"), key=K["pe"], help=t("lesson_positions.pe_help"), persist_state="session")

tokens = tokenize(st.session_state[K["text"]])
if len(tokens) > MAX_T:
    st.info(t("lesson_positions.too_many", n=len(tokens), cap=MAX_T), icon=":material/content_cut:")
    tokens = tokens[:MAX_T]
d_model, seed = int(st.session_state[K["d_model"]]), int(st.session_state[K["seed"]])
use_pe = bool(st.session_state[K["pe"]])
if len(tokens) < 2:
    st.info(t("lesson_positions.empty"), icon=":material/edit:")
else:
    order = lesson.permutation(st.session_state[K["perm"]], len(tokens), seed)
    plain = lesson.equivariance(tokens, d_model, seed, order, positions=False)
    with_pe = lesson.equivariance(tokens, d_model, seed, order, positions=True)
    shown = with_pe if use_pe else plain
    st.markdown(
        t(
            "lesson_positions.order",
            a=" · ".join(md_escape(x) for x in tokens),
            b=" · ".join(md_escape(x) for x in shown.shuffled_tokens),
        )
    )
    st.markdown(t("lesson_positions.eq_body"))
    st.latex(
        r"\mathrm{Attn}(P X) = P\,\mathrm{Attn}(X) \quad\text{but}\quad "
        r"\mathrm{Attn}(P X + E) \neq P\,\mathrm{Attn}(X + E)"
    )
    m = st.columns(2)
    m[0].metric(t("lesson_positions.diff_plain"), sci(plain.max_diff), help=t("lesson_positions.diff_help"))
    m[1].metric(t("lesson_positions.diff_pe"), sci(with_pe.max_diff), help=t("lesson_positions.diff_help"))
    verdict = "verdict_pe" if use_pe else "verdict_plain"
    (st.warning if use_pe else st.success)(
        t(f"lesson_positions.{verdict}", diff=sci(shown.max_diff)), icon=":material/swap_horiz:"
    )
    dims = dim_labels(d_model)
    left, right = st.columns(2)
    with left:
        chart(matrix_figure(shown.out, tokens, dims, title=t("lesson_positions.out_original")), key="lpos.chart.out")
        chart(
            matrix_figure(shown.out_unshuffled, tokens, dims, title=t("lesson_positions.out_back")),
            key="lpos.chart.back",
        )
    with right:
        chart(
            matrix_figure(shown.out_shuffled, shown.shuffled_tokens, dims, title=t("lesson_positions.out_shuffled")),
            key="lpos.chart.shuffled",
        )
        chart(
            matrix_figure(
                np.abs(shown.out - shown.out_unshuffled),
                tokens,
                dims,
                kind="positive",
                title=t("lesson_positions.out_diff"),
            ),
            key="lpos.chart.diff",
        )

# 2. sinusoids ---------------------------------------------------------------------------------------
st.subheader(t("lesson_positions.pe_title"))
st.markdown(t("lesson_positions.pe_body"))
st.latex(
    r"PE_{(p,\,2i)} = \sin\!\left(\frac{p}{10000^{2i/d}}\right), \qquad "
    r"PE_{(p,\,2i+1)} = \cos\!\left(\frac{p}{10000^{2i/d}}\right)"
)
cols = st.columns(2)
cols[0].number_input(
    t("lesson_positions.n_pos"),
    1,
    256,
    step=1,
    key=K["n_pos"],
    help=t("lesson_positions.n_pos_help"),
    persist_state="session",
)
cols[1].number_input(
    t("lesson_positions.pe_d"),
    2,
    128,
    step=1,
    key=K["pe_d"],
    help=t("lesson_positions.pe_d_help"),
    persist_state="session",
)
state.save(SCOPE, PARAMS)
n_pos, pe_d = int(st.session_state[K["n_pos"]]), int(st.session_state[K["pe_d"]])
pe = lesson.pe_table(n_pos, pe_d)
chart(
    pe_figure(pe, t("lesson_positions.pe_chart"), t("lesson_positions.dimension"), t("lesson_positions.position")),
    key="lpos.chart.pe",
)
st.markdown(f"**{t('lesson_positions.pe_table')}**")
rows, cols_n = min(n_pos, 4), min(pe_d, 6)
st.dataframe(
    pd.DataFrame(pe[:rows, :cols_n], index=[f"p={p}" for p in range(rows)], columns=dim_labels(cols_n)).style.format(
        "{:.6f}"
    )
)
if n_pos > 1:
    st.caption(t("lesson_positions.pe_example", s=f"{pe[1, 0]:.6f}", c=f"{pe[1, 1]:.6f}"))
