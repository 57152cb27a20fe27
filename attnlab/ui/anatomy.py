"""Helpers shared by the Multi-head, Cross-attention and Neuron pages: URL saving, checks, figures."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from attnlab.limits import TOL_FLOAT64
from attnlab.params import Param
from attnlab.ui import lab, state
from attnlab.ui.i18n import t

TOLERANCE = TOL_FLOAT64  # float64 end to end


def adopt_lab_state(extra_keys: Sequence[str] = ()) -> None:
    """Let this page's widgets take values kept from another page (see `state.adopt`)."""
    state.adopt([*lab.K.values(), *extra_keys])


def save_with_lab(scope: str, params: Sequence[Param]) -> None:
    """Write the Playground's state plus this page's own parameters into the URL (one query)."""
    lab.save({p.name: p.dump(st.session_state[state.key(scope, p.name)]) for p in params})


def fmt_diff(value: float) -> str:
    """A max |difference| as text: 0, 3.3e-16, or NaN."""
    if math.isnan(value):
        return "NaN"
    return "0" if value == 0 else f"{value:.1e}"


def check_table(rows: list[tuple[str, str, float]], tol: float = TOLERANCE) -> None:
    """A small table of (what, compared with, max |Δ|) with a pass/fail line above it."""
    finite = [err for *_, err in rows if not math.isnan(err)]
    if finite and max(finite) <= tol:
        st.success(t("anatomy.check_pass", tol=f"{tol:.0e}"), icon=":material/check_circle:")
    elif finite:
        st.error(t("anatomy.check_fail", tol=f"{tol:.0e}"), icon=":material/error:")
    frame = pd.DataFrame(
        [(what, against, fmt_diff(err)) for what, against, err in rows],
        columns=[t("anatomy.col_what"), t("anatomy.col_against"), "max |Δ|"],
    )
    st.dataframe(frame, hide_index=True, width="stretch")


def block_lines(fig: go.Figure, size: int, n_blocks: int, axis: str = "x", **where) -> go.Figure:
    """Thick rules between equal blocks of columns (axis x) or rows (axis y)."""
    for b in range(1, n_blocks):
        pos = b * size - 0.5
        if axis == "x":
            fig.add_vline(x=pos, line=dict(color="#222", width=2), **where)
        else:
            fig.add_hline(y=pos, line=dict(color="#222", width=2), **where)
    return fig


def vector(values: np.ndarray) -> np.ndarray:
    """A 1-D vector as a one-row matrix for matrix_figure."""
    return np.asarray(values, dtype=np.float64).reshape(1, -1)


def head_name(h: int) -> str:
    """Heads are counted from 1 in the UI."""
    return t("lab.check_head", h=h + 1)
