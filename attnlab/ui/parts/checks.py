"""What the Multi-head, Cross-attention and Neuron pages share: the PyTorch check table and head names."""

from __future__ import annotations

import math

import streamlit as st

from attnlab.limits import RTOL_FLOAT64, TOL_FLOAT64
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import markdown_table


def fmt_diff(value: float) -> str:
    """A max |difference| as text: 0, 3.3e-16, or NaN."""
    if math.isnan(value):
        return "NaN"
    return "0" if value == 0 else f"{value:.1e}"


def check_table(
    rows: list[tuple[str, str, float]], size: float, pair: tuple[float, float] = (TOL_FLOAT64, RTOL_FLOAT64)
) -> None:
    """A small table of (what ↔ compared with, max |Δ|) with a pass/fail line above it.

    Allowed: the pair's floor plus its relative part of `size`, the largest |value| compared (`attnlab.tolerance`):
    an edited weight of 1000 makes values whose last bits no other summation order keeps. Markdown, not a data grid,
    whose scripts (about 1.2 MB) cost a phone's first visit more than a chart (issue 61); two columns, so that a
    phone's 358 px wrap the words and never a number.
    """
    tol = pair[0] + pair[1] * size
    finite = [err for *_, err in rows if not math.isnan(err)]
    if finite and max(finite) <= tol:
        st.success(t("anatomy.check_pass", tol=f"{tol:.1e}"), icon=":material/check_circle:")
    elif finite:
        st.error(t("anatomy.check_fail", tol=f"{tol:.1e}"), icon=":material/error:")
    header = (f"{t('anatomy.col_what')} ↔ {t('anatomy.col_against')}", "max |Δ|")
    st.markdown(markdown_table(header, [(f"{what} ↔ {against}", fmt_diff(err)) for what, against, err in rows]))


def head_name(h: int) -> str:
    """Heads are counted from 1 in the UI."""
    return t("lab.check_head", h=h + 1)
