"""The tiled attention page's sections: the tile stepper, the running max and sum, the assembled output."""

import math

import pandas as pd
import streamlit as st
import torch

from attnlab import links
from attnlab.attention import AttentionSteps, attention_steps
from attnlab.figures import dim_labels, grid_figure, matrix_figure
from attnlab.figures.screen import share as screen_share
from attnlab.tiled import TiledTrace, assembled, step_stats, tiled_trace
from attnlab.ui.app import latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import chart, number, slider, toggle

PAGE = PageState("tiled", links.params("tiled"))


def num(x: float) -> str:
    """A running statistic as text: −∞ for 'nothing seen yet'."""
    return "−∞" if math.isinf(x) and x < 0 else f"{x:.4f}"


def move(delta: int, n: int) -> None:
    """Previous / next step (a button callback, so the slider shows the new value on this run)."""
    PAGE["step"] = min(max(PAGE["step"] + delta, 1), n)


def controls() -> None:
    """T, d, the two block sizes, the seed and the causal mask."""
    cols = st.columns([0.8, 0.8, 1.2, 1.2, 1, 1.3], vertical_alignment="bottom")
    number(PAGE, "T", "T", where=cols[0], help=t("tiled.t_help"))
    number(PAGE, "d", "d", where=cols[1], help=t("tiled.d_help"))
    number(PAGE, "bq", t("tiled.bq"), where=cols[2])
    number(PAGE, "bk", t("tiled.bk"), where=cols[3])
    number(PAGE, "seed", t("tiled.seed"), where=cols[4])
    toggle(PAGE, "causal", t("tiled.causal"), where=cols[5])


def compute() -> tuple[AttentionSteps, TiledTrace]:
    """Seeded q, k, v; the full softmax and the tiled trace of the same numbers."""
    gen = torch.Generator().manual_seed(PAGE["seed"])
    q, k, v = (torch.randn(PAGE["T"], PAGE["d"], generator=gen, dtype=torch.float64) for _ in range(3))
    full = attention_steps(q, k, v, is_causal=PAGE["causal"])
    trace = tiled_trace(q, k, v, is_causal=PAGE["causal"], block_q=PAGE["bq"], block_k=PAGE["bk"])
    return full, trace


UPDATE = (  # one tile's update of a row's running max, sum and output, as (left side, right side)
    ("m'", r"\max\!\big(m,\ \textstyle\max_j S_{ij}\big)"),
    ("l'", r"e^{m-m'}\,l + \textstyle\sum_j e^{S_{ij}-m'}"),
    (r"\mathrm{acc}'", r"e^{m-m'}\,\mathrm{acc} + \textstyle\sum_j e^{S_{ij}-m'}\,V_j"),
    ("O", r"\mathrm{acc}\,/\,l"),
)


def update_formula(narrow: bool) -> str:
    """The four updates, two to a line, or one to a line on a phone's column (two side by side run 500 px)."""
    eqs = [rf"{left} &= {right}" for left, right in UPDATE]
    rows = [eqs[i : i + (1 if narrow else 2)] for i in range(0, len(eqs), 1 if narrow else 2)]
    return r"\begin{aligned}" + r",\\ ".join(r", & ".join(row) for row in rows) + r"\end{aligned}"


def stepper(n_steps: int, first: bool) -> int:
    """Previous, a slider and next; a step past the end (from a link) is clamped and said. Returns the step."""
    if PAGE["step"] > n_steps:
        if first:
            PAGE.add_problem("tiled.url_step", step=PAGE["step"], n=n_steps)
        PAGE["step"] = n_steps
    PAGE.show_problems()
    with st.expander(t("tiled.idea_title"), expanded=True):
        st.markdown(t("tiled.idea"))
        st.latex(update_formula(latex.narrow()))
    if n_steps > 1:
        nav = st.columns([2.2, 6, 2.2], vertical_alignment="bottom")  # "Previous" whole at 1024 px
        icons = (":material/chevron_left:", ":material/chevron_right:")
        nav[0].button(t("tiled.prev"), on_click=move, args=(-1, n_steps), icon=icons[0], width="stretch")
        slider(PAGE, "step", t("tiled.step"), where=nav[1], hi=n_steps)
        nav[2].button(t("tiled.next"), on_click=move, args=(1, n_steps), icon=icons[1], width="stretch")
    else:
        PAGE["step"] = 1
    return PAGE["step"]


def tile_and_matrix(full: AttentionSteps, trace: TiledTrace, s: int) -> None:
    """This step's tile of scores beside the full weight matrix with the tile outlined."""
    cur, n = trace.steps[s - 1], PAGE["T"]
    (r0, r1), (c0, c1) = cur.q_rows, cur.k_cols
    qs, ks = [f"q{i}" for i in range(n)], [f"k{j}" for j in range(n)]
    axes = dict(row_name=t("tiled.query"), col_name=t("tiled.key"))
    left, right = st.columns(2)
    with left, screen_share(0.5):  # each chart laid out for half the page
        st.markdown(f"**{t('tiled.tile_title')}**")
        if cur.skipped:
            st.info(t("tiled.skipped"), icon=":material/skip_next:")
        else:
            chart(matrix_figure(cur.scores.numpy(), qs[r0:r1], ks[c0:c1], **axes), "tl.tile")
        st.caption(t("tiled.held", bq=r1 - r0, bk=c1 - c0, n=(r1 - r0) * (c1 - c0), t=n, tt=n * n))
    with right, screen_share(0.5):
        st.markdown(f"**{t('tiled.full_title')}**")
        fig = matrix_figure(
            full.weights.numpy(),
            qs,
            ks,
            kind="prob",
            col_breaks=range(trace.block_k, n, trace.block_k),
            row_breaks=range(trace.block_q, n, trace.block_q),
            breaks_dash="dot",
            outline=((r0, r1), (c0, c1)),
            blocked_text=t("tiled.blocked"),
            **axes,
        )
        chart(fig, "tl.full")


def running_stats(trace: TiledTrace, s: int) -> None:
    """m, l and the rescaling factor of the current query block, before and after this tile."""
    table = [
        {
            t("tiled.query"): f"q{r.row}",
            t("tiled.m_before"): num(r.m_before),
            t("tiled.m_after"): num(r.m_after),
            "α = e^(m − m′)": "" if math.isinf(r.m_after) else ("—" if r.alpha is None else f"{r.alpha:.4f}"),
            t("tiled.l_before"): f"{r.l_before:.4f}",
            t("tiled.l_after"): f"{r.l_after:.4f}",
        }
        for r in step_stats(trace, s)
    ]
    st.markdown(f"**{t('tiled.stats_title')}**")
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")
    st.caption(t("tiled.stats_note"))


def outputs(full: AttentionSteps, trace: TiledTrace, s: int) -> None:
    """The block's partial output against the full rows, and the output assembled so far against the full one."""
    cur, n, n_k = trace.steps[s - 1], PAGE["T"], -(-PAGE["T"] // trace.block_k)
    (r0, r1), dims = cur.q_rows, dim_labels(PAGE["d"])
    qs = [f"q{i}" for i in range(n)]
    last_of_block = cur.k_block == n_k - 1
    partial, final_rows = cur.out.numpy(), full.output[r0:r1].numpy()
    axes = dict(row_name=t("tiled.query"), col_name="dim")
    st.markdown(f"**{t('tiled.partial_title')}**")
    titles = [t("tiled.partial_tiled"), t("tiled.partial_full")]
    chart(grid_figure([partial, final_rows], titles, qs[r0:r1], dims, **axes), "tl.part")
    gap = float(abs(partial - final_rows).max()) if partial.size else 0.0
    st.caption(t("tiled.partial_done" if last_of_block else "tiled.partial_gap", gap=f"{gap:.2e}"))
    st.markdown(f"**{t('tiled.output_title')}**")
    titles = [t("tiled.output_tiled"), t("tiled.output_full")]
    chart(grid_figure([assembled(trace, s).numpy(), full.output.numpy()], titles, qs, dims, **axes), "tl.out")
    if s == len(trace.steps):
        diff = float((trace.output - full.output).abs().max()) if n else 0.0
        st.success(t("tiled.agree", diff=f"{diff:.2e}"), icon=":material/check_circle:")
    else:
        st.caption(t("tiled.not_yet", rows=r1 if last_of_block else r0, t=n))
