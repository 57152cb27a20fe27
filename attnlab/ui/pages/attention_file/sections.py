"""The Attention file page's views of one file: all heads, one head as lines, the query-key map, finder, rollout."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab.attnexamples import CAUSAL
from attnlab.attnfile import AttentionFile
from attnlab.figures import matrix_figure
from attnlab.figures.pretrained import head_lines_figure, model_view_figure
from attnlab.limits import MAX_DRAWN_TOKENS
from attnlab.pretrained import PATTERNS
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, segmented, selectbox
from attnlab.ui.pages.attention_file import source as page
from attnlab.ui.pages.attention_file.source import PAGE
from attnlab.ui.parts.headviews import head_finder, model_view_chart, rollout_charts
from attnlab.ui.parts.qkview import qk_panel


def fit(file: AttentionFile, views: tuple[str, ...]) -> None:
    """Link values this file cannot honour (a layer past its end, a view it cannot show): replaced, and said."""
    n_layers, n_heads, t_q, t_k = file.attentions.shape
    for name, size, first in (("layer", n_layers, 1), ("head", n_heads, 1), ("q", t_q, 0), ("k", t_k, 0)):
        if PAGE[name] > size:
            st.info(t("attnfile.past_end", asked=code(f"{name}={PAGE[name]}"), n=size), icon=":material/info:")
            PAGE[name] = first
    if PAGE["view"] not in views:
        st.info(t("attnfile.view_missing", view=t(f"attnfile.view_{PAGE['view']}")), icon=":material/info:")
        PAGE["view"] = "model"


def picked() -> tuple[int, int, int | None, int | None]:
    """Layer and head (0-based), the followed query and key (0-based or None)."""
    q, k = PAGE["q"], PAGE["k"]
    return PAGE["layer"] - 1, PAGE["head"] - 1, (q - 1 if q else None), (k - 1 if k else None)


def view_picker(views: tuple[str, ...]) -> str:
    """Which of the views this file can show is on screen."""
    labels = {v: t(f"attnfile.view_{v}") for v in views}
    return segmented(PAGE, "view", t("attnfile.view"), options=views, labels=labels)


def layer_head_pickers(file: AttentionFile, follow_key: bool = True) -> None:
    """Layer, head, and the query (and key) to follow, side by side."""
    n_layers, n_heads, _, _ = file.attentions.shape
    cols = st.columns(4 if follow_key else 3)
    selectbox(PAGE, "layer", t("attnfile.layer"), where=cols[0], options=list(range(1, n_layers + 1)))
    selectbox(PAGE, "head", t("attnfile.head"), where=cols[1], options=list(range(1, n_heads + 1)))
    queries = {0: t("attnfile.every_query")} | {i + 1: f"{i + 1}: {tok}" for i, tok in enumerate(file.tokens)}
    selectbox(PAGE, "q", t("attnfile.query"), where=cols[2], options=list(queries), labels=queries)
    if follow_key:
        keys = {0: t("attnfile.no_key")} | {j + 1: f"{j + 1}: {tok}" for j, tok in enumerate(file.tokens_k)}
        selectbox(PAGE, "k", t("attnfile.key"), where=cols[3], options=list(keys), labels=keys)


def model_view(file: AttentionFile) -> None:
    """Every layer x head at once; a click on one opens it."""
    layer, head, _, _ = picked()
    st.caption(t("attnfile.model_help"))
    figure = model_view_figure(page.attention_array(file), t("attnfile.layer"), t("attnfile.head"), (layer, head))
    model_view_chart(PAGE, figure)


def too_long(file: AttentionFile, message: str) -> bool:
    """More tokens than a page draws as heatmaps and full line sets (a long upload): say so once."""
    if max(file.attentions.shape[-2:]) <= MAX_DRAWN_TOKENS:
        return False
    st.info(t(f"attnfile.{message}", n=max(file.attentions.shape[-2:]), cap=MAX_DRAWN_TOKENS), icon=":material/info:")
    return True


def head_view(file: AttentionFile, kind: str) -> None:
    """One head as a heatmap and as bertviz's lines; cross attention keeps the target left and the source right."""
    layer_head_pickers(file)
    layer, head, query, key = picked()
    weights = page.attention_array(file)[layer, head]  # (T_q, T_k)
    sides = (t("attnfile.target"), t("attnfile.source_side")) if kind == "cross" else None
    if too_long(file, "too_long"):
        query = 0 if query is None and key is None else query  # one token's lines, never all T_q x T_k
        lines = head_lines_figure(weights, file.tokens, query, t("attnfile.lines_title"), file.tokens_k, key, sides)
        chart(lines, "attnfile.head_lines")
        return
    left, right = st.columns([3, 2])
    with left:
        chart(
            matrix_figure(
                weights,
                list(file.tokens),
                list(file.tokens_k),
                kind="prob",
                title=t("attnfile.head_title", layer=layer + 1, head=head + 1),
                highlight_row=query,
                row_name=t("stages.query"),
                col_name=t("stages.key"),
            ),
            "attnfile.head_map",
        )
    with right:
        lines = head_lines_figure(weights, file.tokens, query, t("attnfile.lines_title"), file.tokens_k, key, sides)
        chart(lines, "attnfile.head_lines")
    st.caption(t("attnfile.lines_help"))


def pick_query(i: int) -> None:
    """A query clicked on the map becomes the followed query."""
    PAGE["q"] = i + 1


def qk_view(file: AttentionFile, kind: str) -> None:
    """The query-key map of the chosen head, from the file's own queries and keys."""
    layer_head_pickers(file, follow_key=False)
    layer, head, query, _ = picked()
    qk_panel(
        np.asarray(file.queries[layer, head], dtype=np.float32),
        np.asarray(file.keys[layer, head], dtype=np.float32),
        page.attention_array(file)[layer, head],
        list(file.tokens),
        list(file.tokens_k),
        query,
        causal=kind in CAUSAL,
        title=t("qk.title", layer=layer + 1, head=head + 1),
        key="attnfile.qk_chart",
        pick=pick_query,
    )


def finder(file: AttentionFile, digest: str) -> None:
    """Rank every head by one pattern score (the Real model page's finder, on this file's weights)."""
    grids = page.scores(digest, file)  # (patterns, L, H)
    head_finder(PAGE, lambda pattern: grids[PATTERNS.index(pattern)], t("attnfile.layer"), t("attnfile.head"))


def rollout_view(file: AttentionFile, digest: str) -> None:
    """One layer's head-averaged attention beside the rollout up to that layer."""
    n_layers = file.attentions.shape[0]
    selectbox(PAGE, "layer", t("attnfile.layer"), options=list(range(1, n_layers + 1)))
    layer = PAGE["layer"] - 1
    if too_long(file, "too_long_rollout"):
        return
    tokens = list(file.tokens)
    raw = page.attention_array(file)[layer].mean(axis=0)  # (T, T)
    rolled = page.rollout(digest, file)[layer]  # (T, T)
    rollout_charts(PAGE, tokens, raw, rolled, layer)
