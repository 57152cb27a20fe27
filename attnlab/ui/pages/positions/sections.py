"""The positions lesson's sections: shuffled tokens with and without positions, the sinusoidal table."""

import pandas as pd
import streamlit as st

from attnlab import links
from attnlab.figures import dim_labels, matrix_figure
from attnlab.figures.lessons import pe_figure
from attnlab.figures.screen import share as screen_share
from attnlab.lessons import positions as lesson
from attnlab.limits import MAX_POSITIONS_TOKENS
from attnlab.tokens import tokenize
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import md_escape
from attnlab.ui.app.widgets import chart, number, selectbox, text_input, toggle

PAGE = PageState("lpos", links.params("lpos"))


def sci(x: float) -> str:
    """Three significant digits: differences of 1e-16 and of 1 both read at a glance."""
    return f"{x:.3g}"


def shuffle_controls() -> list[str]:
    """The sentence, d_model, seed, the shuffle and the positions switch; returns the tokens (cut and said)."""
    text_input(PAGE, "text", t("lesson_positions.text"), help=t("lesson_positions.text_help", cap=MAX_POSITIONS_TOKENS))
    cols = st.columns([1, 1, 2, 1.5], vertical_alignment="bottom")
    number(PAGE, "d_model", t("lesson_positions.d_model"), where=cols[0], help=t("lesson_positions.d_model_help"))
    number(PAGE, "seed", t("lesson_positions.seed"), where=cols[1], help=t("lesson_positions.seed_help"))
    labels = {p: t(f"lesson_positions.perm_{p}") for p in lesson.PERMUTATIONS}
    selectbox(PAGE, "perm", t("lesson_positions.perm"), where=cols[2], labels=labels)
    toggle(PAGE, "pe", t("lesson_positions.pe"), where=cols[3], help=t("lesson_positions.pe_help"))
    tokens = tokenize(PAGE["text"])
    if len(tokens) > MAX_POSITIONS_TOKENS:
        st.info(t("lesson_positions.too_many", n=len(tokens), cap=MAX_POSITIONS_TOKENS), icon=":material/content_cut:")
    return tokens[:MAX_POSITIONS_TOKENS]


def outputs(shown: lesson.Equivariance, tokens: list[str], d_model: int) -> None:
    """Original, shuffled, un-shuffled outputs and their difference, two charts to a row: each laid out for half the
    page (its title wrapped, its column labels slanted where they would not fit)."""
    dims = dim_labels(d_model)
    left, right = st.columns(2)
    with left, screen_share(0.5):
        chart(matrix_figure(shown.out, tokens, dims, title=t("lesson_positions.out_original")), key="lpos.chart.out")
        back = matrix_figure(shown.out_unshuffled, tokens, dims, title=t("lesson_positions.out_back"))
        chart(back, key="lpos.chart.back")
    with right, screen_share(0.5):
        title = t("lesson_positions.out_shuffled")
        chart(matrix_figure(shown.out_shuffled, shown.shuffled_tokens, dims, title=title), key="lpos.chart.shuffled")
        diff = matrix_figure(shown.difference, tokens, dims, kind="positive", title=t("lesson_positions.out_diff"))
        chart(diff, key="lpos.chart.diff")


def shuffle_section() -> None:
    """1. Shuffle the sentence, un-shuffle the outputs: equal without positions, different with them."""
    st.subheader(t("lesson_positions.shuffle_title"))
    tokens = shuffle_controls()
    if len(tokens) < 2:
        st.info(t("lesson_positions.empty"), icon=":material/edit:")
        return
    d_model, seed, use_pe = PAGE["d_model"], PAGE["seed"], PAGE["pe"]
    order = lesson.permutation(PAGE["perm"], len(tokens), seed)
    plain = lesson.equivariance(tokens, d_model, seed, order, positions=False)
    with_pe = lesson.equivariance(tokens, d_model, seed, order, positions=True)
    shown = with_pe if use_pe else plain
    original, shuffled = (" · ".join(md_escape(x) for x in seq) for seq in (tokens, shown.shuffled_tokens))
    st.markdown(t("lesson_positions.order", a=original, b=shuffled))
    st.markdown(t("lesson_positions.eq_body"))
    latex.show(
        rf"\mathrm{{Attn}}(P X) = P\,\mathrm{{Attn}}(X) \quad{latex.words(t('lesson_positions.but'))}\quad "
        r"\mathrm{Attn}(P X + E) \neq P\,\mathrm{Attn}(X + E)"
    )
    m = st.columns(2)
    m[0].metric(t("lesson_positions.diff_plain"), sci(plain.max_diff), help=t("lesson_positions.diff_help"))
    m[1].metric(t("lesson_positions.diff_pe"), sci(with_pe.max_diff), help=t("lesson_positions.diff_help"))
    verdict = "verdict_pe" if use_pe else "verdict_plain"
    say = st.warning if use_pe else st.success
    say(t(f"lesson_positions.{verdict}", diff=sci(shown.max_diff)), icon=":material/swap_horiz:")
    outputs(shown, tokens, d_model)


def sinusoid_section() -> None:
    """2. The sinusoids themselves: a dense heatmap and their exact first values."""
    st.subheader(t("lesson_positions.pe_title"))
    st.markdown(t("lesson_positions.pe_body"))
    latex.show(
        r"PE_{(p,\,2i)} = \sin\!\left(\frac{p}{10000^{2i/d}}\right), \qquad "
        r"PE_{(p,\,2i+1)} = \cos\!\left(\frac{p}{10000^{2i/d}}\right)"
    )
    cols = st.columns(2)
    number(PAGE, "n_pos", t("lesson_positions.n_pos"), where=cols[0], help=t("lesson_positions.n_pos_help"))
    number(PAGE, "pe_d", t("lesson_positions.pe_d"), where=cols[1], help=t("lesson_positions.pe_d_help"))
    n_pos, pe_d = PAGE["n_pos"], PAGE["pe_d"]
    pe = lesson.pe_table(n_pos, pe_d)
    names = (t("lesson_positions.pe_chart"), t("lesson_positions.dimension"), t("lesson_positions.position"))
    chart(pe_figure(pe, *names), key="lpos.chart.pe")
    with fold.section(PAGE, "values", t("lesson_positions.pe_table"), icon=":material/table:") as drawn:
        if drawn:  # folded until opened: a data grid's scripts cost a phone's first visit more than a chart
            rows, cols_n = min(n_pos, 4), min(pe_d, 6)
            index = [f"p={p}" for p in range(rows)]
            frame = pd.DataFrame(pe[:rows, :cols_n], index=index, columns=dim_labels(cols_n))
            st.dataframe(frame.style.format("{:.6f}"))
    if n_pos > 1:
        st.caption(t("lesson_positions.pe_example", s=f"{pe[1, 0]:.6f}", c=f"{pe[1, 1]:.6f}"))
