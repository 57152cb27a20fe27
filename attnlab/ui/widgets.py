"""Small drawing helpers every page uses: charts, stage headers, token chips, shape captions."""

from __future__ import annotations

import re
from collections.abc import Sequence

import plotly.graph_objects as go
import streamlit as st

from attnlab.params import divisors
from attnlab.ui.i18n import t
from attnlab.ui.state import fit_heads

CHART_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["lasso2d", "select2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$&])")


def keep_choice(key: str, options: Sequence, fallback) -> None:
    """Before a required choice widget is drawn, make sure its state is one of its options.

    The browser occasionally reports a required segmented control as unselected on a rerun;
    without this, the language (or the head view) would silently fall back or break.
    """
    value = st.session_state.get(key)
    if value in options:
        st.session_state[f"_last.{key}"] = value
        return
    last = st.session_state.get(f"_last.{key}")
    st.session_state[key] = last if last in options else fallback


def size_inputs(cols, d_key: str, h_key: str, seed_key: str, max_d: int, max_seed: int) -> None:
    """d_model, heads (only divisors are offered) and seed, in three given columns."""
    cols[0].number_input(
        "d_model",
        min_value=2,
        max_value=max_d,
        step=1,
        key=d_key,
        help=t("common.d_model_help"),
        on_change=fit_heads,
        args=(d_key, h_key),
        persist_state="session",
    )
    cols[1].selectbox(
        t("common.heads"),
        divisors(st.session_state[d_key]),
        key=h_key,
        help=t("common.heads_help"),
        persist_state="session",
    )
    cols[2].number_input(
        t("common.seed"),
        min_value=0,
        max_value=max_seed,
        step=1,
        key=seed_key,
        help=t("common.seed_help"),
        persist_state="session",
    )


def md_escape(text: str) -> str:
    """User text made inert for Streamlit markdown: no emphasis, links, HTML or math."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def chart(fig: go.Figure, key: str) -> None:
    """A Plotly chart at full width with a lean toolbar."""
    st.plotly_chart(fig, width="stretch", config=CHART_CONFIG, key=key)


def shape_text(name: str, dims: Sequence[str], sizes: Sequence[int]) -> str:
    """'`Q: (T, d_k) = (5, 4)`': the symbolic and the actual shape of a matrix, as inline code."""
    return f"`{name}: ({', '.join(dims)}) = ({', '.join(str(s) for s in sizes)})`"


def stage(number: int, title: str, formula: str, shape: str, note: str | None = None) -> None:
    """Heading, formula and shape line that introduce one stage of the computation."""
    st.markdown(f"#### {number}. {title}")
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.latex(formula)
    with right:
        st.caption(shape)
        if note:
            st.caption(note)


def token_chips(tokens: Sequence[str], key: str) -> int | None:
    """The tokens as chips (shown as text, never HTML); picking one returns its position."""
    return st.pills(
        t("common.tokens_label", n=len(tokens)),
        list(range(len(tokens))),
        format_func=lambda i: md_escape(tokens[i]),
        help=t("common.tokens_help"),
        key=key,
        persist_state="session",
    )
