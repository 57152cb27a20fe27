"""The inspector's building blocks: a clickable model view, the head finder, the rollout charts.

The inspector (`inspector.py`) draws them for the Real model and Attention file pages. Both pages keep `layer`,
`head` and `view` in a PageState; a click on a map or a row of the finder's table opens that head's view by
setting them, in a callback, so the view picker drawn after it already shows it.
Widget keys are `<scope>.model_chart`, `<scope>.pattern`, `<scope>.finder_grid` and `<scope>.finder`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from attnlab.figures import matrix_figure
from attnlab.figures.prebuilt import Prebuilt
from attnlab.figures.screen import share as screen_share
from attnlab.pretrained import PATTERNS
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import chart, chart_config


def open_head(page: PageState, layer: int, head: int) -> None:
    """Switch the page to the head view of one head (0-based arguments)."""
    page["layer"], page["head"], page["view"] = layer + 1, head + 1, "head"


def model_view_chart(page: PageState, figure: Prebuilt) -> None:
    """The model view's picture, where a click on one map opens that head."""
    key = page.key("model_chart")

    def picked() -> None:
        points = st.session_state[key]["selection"]["points"]
        chosen = [p["customdata"] for p in points if p.get("customdata")]
        if chosen:
            open_head(page, *chosen[0])

    st.plotly_chart(
        figure,
        width="stretch",
        on_select=picked,
        selection_mode="points",
        key=key,
        config=chart_config(key, image_only=True),
    )


def ranked(grid: np.ndarray) -> list[tuple[int, int, float]]:
    """(L, H) scores -> (layer, head, score) rows, 1-based, highest first (ties in layer, head order)."""
    n_heads = grid.shape[1]
    order = np.argsort(-grid, axis=None, kind="stable")
    return [(int(i) // n_heads + 1, int(i) % n_heads + 1, float(grid.flat[i])) for i in order]


def head_finder(page: PageState, scores_of: Callable[[str], np.ndarray], layer_word: str, head_word: str) -> None:
    """Every head ranked by one pattern score, as a layers x heads grid and a table whose rows open a head."""
    labels = {p: t(f"real.pattern_{p}") for p in PATTERNS}
    pattern = (
        st.segmented_control(
            t("real.pattern"),
            PATTERNS,
            format_func=labels.get,
            key=page.key("pattern"),
            default="previous",
            required=True,
        )
        or "previous"
    )
    st.caption(t(f"real.pattern_{pattern}_help"))
    grid = scores_of(pattern)  # (L, H)
    layers = [f"{layer_word} {i + 1}" for i in range(grid.shape[0])]
    heads = [str(h + 1) for h in range(grid.shape[1])]
    figure = matrix_figure(grid, layers, heads, kind="prob", row_name=layer_word, col_name=head_word, text=True)
    chart(figure, page.key("finder_grid"))
    rows = ranked(grid)
    table = page.key("finder")

    def open_row() -> None:
        selected = st.session_state[table]["selection"]["rows"]
        if selected:
            layer, head, _ = rows[selected[0]]
            open_head(page, layer - 1, head - 1)

    st.dataframe(
        pd.DataFrame(rows, columns=[layer_word, head_word, labels[pattern]]),
        hide_index=True,
        on_select=open_row,
        selection_mode="single-row",
        key=table,
        height=300,
        column_config={labels[pattern]: st.column_config.NumberColumn(format="%.3f")},
    )
    st.caption(t("real.finder_help"))


def rollout_charts(page: PageState, tokens: list[str], raw: np.ndarray, rolled: np.ndarray, layer: int) -> None:
    """One layer's head-averaged weights beside the rollout up to it, both (T, T), and what rollout cannot say."""
    axes = dict(kind="prob", row_name=t("stages.query"), col_name=t("stages.key"))
    left, right = st.columns(2)
    with left, screen_share(0.5):  # each chart laid out for half the page
        chart(matrix_figure(raw, tokens, tokens, title=t("real.raw_title", layer=layer + 1), **axes), page.key("raw"))
    with right, screen_share(0.5):
        title = t("real.rollout_title", layer=layer + 1)
        chart(matrix_figure(rolled, tokens, tokens, title=title, **axes), page.key("rollout"))
    st.info(t("real.rollout_honest"), icon=":material/info:")
