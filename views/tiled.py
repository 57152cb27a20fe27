"""Tiled attention, step by step: one (query block, key block) tile at a time with the online softmax's running
max m, running sum l and partial output, beside the full softmax that stores the whole T x T matrix."""

import math

import numpy as np
import pandas as pd
import streamlit as st
import torch

from attnlab.attention import attention_steps
from attnlab.figures import dim_labels, grid_figure, matrix_figure
from attnlab.figures_bench import tile_grid_figure
from attnlab.params import Param, boolean, dump_bool, int_in
from attnlab.tiled import tiled_trace
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart

SCOPE = "tiled"
MAX_T = 12
PARAMS = (
    Param("T", 6, int_in(1, MAX_T, 6)),
    Param("d", 4, int_in(1, 8, 4)),
    Param("bq", 3, int_in(1, MAX_T, 3)),
    Param("bk", 2, int_in(1, MAX_T, 2)),
    Param("causal", False, boolean(False), dump_bool),
    Param("seed", 0, int_in(0, 999_999, 0)),
    Param("step", 1, int_in(1, 999_999, 1)),  # past the last step: clamped below, and said
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


def num(x: float) -> str:
    """A running statistic as text: −∞ for 'nothing seen yet'."""
    return "−∞" if math.isinf(x) and x < 0 else f"{x:.4f}"


def move(delta: int, n: int) -> None:
    """Previous / next step (a button callback, so the slider shows the new value on this run)."""
    st.session_state[K["step"]] = min(max(int(st.session_state[K["step"]]) + delta, 1), n)


first = not st.session_state.get(f"_loaded.{SCOPE}")
state.load(SCOPE, PARAMS)
st.title(t("tiled.title"))
st.caption(t("tiled.intro"))

cols = st.columns([0.8, 0.8, 1.2, 1.2, 1, 1.3], vertical_alignment="bottom")
cols[0].number_input("T", 1, MAX_T, step=1, key=K["T"], help=t("tiled.t_help"), persist_state="session")
cols[1].number_input("d", 1, 8, step=1, key=K["d"], help=t("tiled.d_help"), persist_state="session")
cols[2].number_input(t("tiled.bq"), 1, MAX_T, step=1, key=K["bq"], persist_state="session")
cols[3].number_input(t("tiled.bk"), 1, MAX_T, step=1, key=K["bk"], persist_state="session")
cols[4].number_input(t("tiled.seed"), 0, 999_999, step=1, key=K["seed"], persist_state="session")
cols[5].toggle(t("tiled.causal"), key=K["causal"], persist_state="session")

T, d, bq, bk, seed = (int(st.session_state[K[n]]) for n in ("T", "d", "bq", "bk", "seed"))
causal = bool(st.session_state[K["causal"]])
gen = torch.Generator().manual_seed(seed)
q, k, v = (torch.randn(T, d, generator=gen, dtype=torch.float64) for _ in range(3))
full = attention_steps(q, k, v, is_causal=causal)
trace = tiled_trace(q, k, v, is_causal=causal, block_q=bq, block_k=bk)
n_steps = len(trace.steps)
if int(st.session_state[K["step"]]) > n_steps:
    if first:
        asked = st.session_state[K["step"]]
        state.add_problem(SCOPE, t("tiled.url_step", step=asked, n=n_steps))
    st.session_state[K["step"]] = n_steps
state.show_problems(SCOPE)

with st.expander(t("tiled.idea_title"), expanded=True):
    st.markdown(t("tiled.idea"))
    st.latex(
        r"\begin{aligned}"
        r"m' &= \max\!\big(m,\ \textstyle\max_j S_{ij}\big), &"
        r"l' &= e^{m-m'}\,l + \textstyle\sum_j e^{S_{ij}-m'},\\"
        r"\mathrm{acc}' &= e^{m-m'}\,\mathrm{acc} + \textstyle\sum_j e^{S_{ij}-m'}\,V_j, &"
        r"O &= \mathrm{acc}\,/\,l"
        r"\end{aligned}"
    )

if n_steps > 1:
    nav = st.columns([1.6, 6, 1.6], vertical_alignment="bottom")
    nav[0].button(t("tiled.prev"), on_click=move, args=(-1, n_steps), icon=":material/chevron_left:", width="stretch")
    nav[1].slider(t("tiled.step"), 1, n_steps, key=K["step"], persist_state="session")
    nav[2].button(t("tiled.next"), on_click=move, args=(1, n_steps), icon=":material/chevron_right:", width="stretch")
else:
    st.session_state[K["step"]] = 1
state.save(SCOPE, PARAMS)

s = int(st.session_state[K["step"]])
cur = trace.steps[s - 1]
(r0, r1), (c0, c1) = cur.q_rows, cur.k_cols
n_q, n_k = -(-T // bq), -(-T // bk)
qs, ks, dims = [f"q{i}" for i in range(T)], [f"k{j}" for j in range(T)], dim_labels(d)
st.markdown(
    "#### "
    + t("tiled.step_head", s=s, n=n_steps, i=cur.q_block + 1, n_q=n_q, j=cur.k_block + 1, n_k=n_k)
    + "  \n"
    + t("tiled.step_rows", r0=r0, r1=r1 - 1, c0=c0, c1=c1 - 1)
)

left, right = st.columns(2)
with left:
    st.markdown(f"**{t('tiled.tile_title')}**")
    if cur.skipped:
        st.info(t("tiled.skipped"), icon=":material/skip_next:")
    else:
        tile = cur.scores.numpy()
        chart(matrix_figure(tile, qs[r0:r1], ks[c0:c1], row_name=t("tiled.query"), col_name=t("tiled.key")), "tl.tile")
    st.caption(t("tiled.held", bq=r1 - r0, bk=c1 - c0, n=(r1 - r0) * (c1 - c0), t=T, tt=T * T))
with right:
    st.markdown(f"**{t('tiled.full_title')}**")
    fig = tile_grid_figure(
        full.weights.numpy(),
        qs,
        ks,
        bq,
        bk,
        ((r0, r1), (c0, c1)),
        kind="prob",
        row_name=t("tiled.query"),
        col_name=t("tiled.key"),
        blocked_text=t("tiled.blocked"),
    )
    chart(fig, "tl.full")

# running statistics of the current query block, before and after this tile
prev = trace.steps[s - 2] if s > 1 and trace.steps[s - 2].q_block == cur.q_block else None
m_before = prev.m.flatten().tolist() if prev else [-math.inf] * (r1 - r0)
l_before = prev.l.flatten().tolist() if prev else [0.0] * (r1 - r0)
m_after, l_after = cur.m.flatten().tolist(), cur.l.flatten().tolist()
table = []
for row, (mb, ma, lb, la) in enumerate(zip(m_before, m_after, l_before, l_after, strict=True)):
    alpha = "" if math.isinf(ma) else ("—" if math.isinf(mb) else f"{math.exp(mb - ma):.4f}")
    table.append(
        {
            t("tiled.query"): qs[r0 + row],
            t("tiled.m_before"): num(mb),
            t("tiled.m_after"): num(ma),
            "α = e^(m − m′)": alpha,
            t("tiled.l_before"): f"{lb:.4f}",
            t("tiled.l_after"): f"{la:.4f}",
        }
    )
st.markdown(f"**{t('tiled.stats_title')}**")
st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")
st.caption(t("tiled.stats_note"))

# partial output of this block against the full softmax's rows
last_of_block = cur.k_block == n_k - 1
partial, final_rows = cur.out.numpy(), full.output[r0:r1].numpy()
st.markdown(f"**{t('tiled.partial_title')}**")
titles = [t("tiled.partial_tiled"), t("tiled.partial_full")]
chart(grid_figure([partial, final_rows], titles, qs[r0:r1], dims, row_name=t("tiled.query"), col_name="dim"), "tl.part")
gap = float(np.abs(partial - final_rows).max()) if partial.size else 0.0
note = "tiled.partial_done" if last_of_block else "tiled.partial_gap"
st.caption(t(note, gap=f"{gap:.2e}"))

# the output assembled so far, beside the full output
st.markdown(f"**{t('tiled.output_title')}**")
so_far = np.full((T, d), np.nan)
for step in trace.steps[:s]:
    a, b = step.q_rows
    so_far[a:b] = step.out.numpy()
chart(
    grid_figure(
        [so_far, full.output.numpy()],
        [t("tiled.output_tiled"), t("tiled.output_full")],
        qs,
        dims,
        row_name=t("tiled.query"),
        col_name="dim",
    ),
    "tl.out",
)
if s == n_steps:
    diff = float((trace.output - full.output).abs().max()) if T else 0.0
    st.success(t("tiled.agree", diff=f"{diff:.2e}"), icon=":material/check_circle:")
else:
    st.caption(t("tiled.not_yet", rows=r0 if not last_of_block else r1, t=T))
