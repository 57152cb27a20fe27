"""Tiled attention, step by step: one (query block, key block) tile at a time with the online softmax's running
max m, running sum l and partial output, beside the full softmax that stores the whole T x T matrix."""

import streamlit as st

from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.tiled.sections import PAGE, compute, controls, outputs, running_stats, stepper, tile_and_matrix


def main() -> None:
    """Settings, the stepper, then this step's tile, statistics and outputs."""
    first = PAGE.load()
    st.title(t("tiled.title"))
    st.caption(t("tiled.intro"))
    controls()
    full, trace = compute()
    s = stepper(len(trace.steps), first)
    state.save(PAGE)
    cur = trace.steps[s - 1]
    n_q, n_k = -(-PAGE["T"] // trace.block_q), -(-PAGE["T"] // trace.block_k)
    (r0, r1), (c0, c1) = cur.q_rows, cur.k_cols
    heading = t("tiled.step_head", s=s, n=len(trace.steps), i=cur.q_block + 1, n_q=n_q, j=cur.k_block + 1, n_k=n_k)
    st.markdown("#### " + heading + "  \n" + t("tiled.step_rows", r0=r0, r1=r1 - 1, c0=c0, c1=c1 - 1))
    tile_and_matrix(full, trace, s)
    first_screen.rest(lambda: later(full, trace, s))  # a new visitor's browser draws this step's tile first


def later(full, trace, s: int) -> None:
    """This step's running statistics, then the outputs so far."""
    running_stats(trace, s)
    outputs(full, trace, s)


main()
