"""The query-key map on a page: one head's queries and keys, a picked query, and how far nearness is attention.

Drawn by the inspector (`inspector.py`) for any attention source with queries and keys: MiniLM's heads on the
Real model page, examples and uploads on the Attention file page. The keys are those of the key/value head the
query head reads (grouped heads), and the vectors are the ones the scores used (after RoPE in a rotary model):
the page says both. Everything shown is computed on this run from the head's own vectors and weights (qkmap).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from attnlab.figures.attnfile import qk_map_figure
from attnlab.qkmap import NEAREST, agreement, qk_map
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart_config


def names() -> dict[str, str]:
    """The figure's words in this session's language."""
    keys = ("layer", "head", "query", "key", "position", "picked", "nearest", "attended", "axis")
    return {k: t(f"qk.{k}") for k in keys}


def picked_on_map(key: str, pick: Callable[[int], None]) -> Callable[[], None]:
    """The chart's selection callback: a clicked query point becomes the picked query."""

    def on_select() -> None:
        points = st.session_state[key]["selection"]["points"]
        chosen = [p["customdata"] for p in points if p.get("customdata") and p["customdata"][0] == "query"]
        if chosen:
            pick(int(chosen[0][1]))

    return on_select


def token_list(tokens: Sequence[str], picks: np.ndarray) -> str:
    """Positions (from 1) and tokens as inert text."""
    return ", ".join(f"{j + 1} {code(tokens[j], 24)}" for j in picks.tolist())


def whole_head(qk, weights: np.ndarray, causal: bool, window: int | None = None) -> None:
    """Nearness against attention over every query of the head: the claim checked without picking anything."""
    found = [agreement(qk, weights, i, causal=causal, window=window) for i in range(len(qk.queries))]
    rho = float(np.median([f.spearman for f in found]))
    rho_2d = float(np.median([f.spearman_2d for f in found]))
    overlap = float(np.mean([f.overlap / len(f.top) for f in found]))
    st.caption(t("qk.whole_head", n=len(found), rho=rho, rho_2d=rho_2d, overlap=overlap, k=NEAREST))


def qk_panel(
    queries: np.ndarray,
    keys: np.ndarray,
    weights: np.ndarray,
    tokens: Sequence[str],
    tokens_k: Sequence[str],
    query: int | None,
    *,
    causal: bool,
    title: str,
    key: str,
    pick: Callable[[int], None],
    window: int | None = None,
    notes: Sequence[str] = (),
) -> None:
    """The map of one head (queries (T_q, d), keys (T_k, d), weights (T_q, T_k)) and its agreement numbers.

    `window` is the layer's causal sliding window (the keys a query can see); `notes` are the sentences about the
    head's grouping and rule, shown above the map.
    """
    qk = qk_map(queries, keys)
    found = None if query is None else agreement(qk, weights, query, causal=causal, window=window)
    st.caption(" ".join([t("qk.as_scored"), *notes]))
    figure = qk_map_figure(qk, tokens, tokens_k, weights, query, found, names(), title)
    st.plotly_chart(
        figure,
        width="stretch",
        on_select=picked_on_map(key, pick),
        selection_mode="points",
        key=key,
        config=chart_config(key, image_only=True),
    )
    if found is None:
        st.info(t("qk.pick"), icon=":material/ads_click:")
    else:
        n = len(found.top)
        cols = st.columns(3)
        cols[0].metric(t("qk.overlap", n=n), f"{found.overlap} / {n}")
        cols[1].metric(t("qk.rho"), f"{found.spearman:.2f}")
        cols[2].metric(t("qk.rho_2d"), f"{found.spearman_2d:.2f}")
        st.markdown(
            t(
                "qk.picked_text",
                query=f"{query + 1} {code(tokens[query], 24)}",
                n=n,
                nearest=token_list(tokens_k, found.nearest),
                top=token_list(tokens_k, found.top),
            )
        )
    whole_head(qk, weights, causal, window)
    st.caption(t("qk.help"))


def qk_title(layer: int, head: int, n_heads: int, n_kv_heads: int) -> str:
    """The map's title (layer and head from 0); with grouped heads it names the key/value head read."""
    if n_kv_heads == n_heads:
        return t("qk.title", layer=layer + 1, head=head + 1)
    return t("qk.title_grouped", layer=layer + 1, head=head + 1, kv=head // (n_heads // n_kv_heads) + 1)


def head_notes(n_heads: int, n_kv_heads: int, head: int, rule: tuple[float | None, float | None, int | None]) -> list:
    """The sentences about one head: which key/value head it reads (grouped heads), and a rule beyond the plain one."""
    notes = []
    if n_kv_heads < n_heads:
        group = n_heads // n_kv_heads
        kv = head // group
        first, last = kv * group + 1, (kv + 1) * group
        notes.append(t("qk.kv_head", head=head + 1, kv=kv + 1, kv_heads=n_kv_heads, first=first, last=last))
    _, softcap, window = rule
    if softcap is not None:
        notes.append(t("qk.softcap", cap=f"{softcap:g}"))
    if window is not None:
        notes.append(t("qk.window", window=window))
    return notes
