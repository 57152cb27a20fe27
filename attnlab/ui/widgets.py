"""Small drawing helpers every page uses: charts, stage headers, token chips, shape captions."""

from __future__ import annotations

import re
from collections.abc import Sequence

import plotly.graph_objects as go
import streamlit as st

from attnlab.ui.i18n import t

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
        key=key,
        persist_state="session",
    )
