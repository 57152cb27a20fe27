"""One set of views of any attention source: model view, head view, query-key map, head finder, rollout.

The Real model page (MiniLM's runs) and the Attention file page (examples and uploads) both draw an
`attnlab.sources.AttentionSource` through these functions. A page hands over a `Shown`: its PageState
(with `layer`, `head`, `view`, `q` and, if the page follows keys, `k`), the prefix of its locale keys
(`<words>.layer`, `<words>.head_title`, ...), the source and a digest that names the source's numbers.
Widget keys are the page's own (`<scope>.head_map`, `<scope>.qk_chart`, ...). The caches hold numbers only,
keyed on the digest; every text and figure is built per session in its language and palette.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from attnlab import links
from attnlab.figures import matrix_figure
from attnlab.figures.attnfile import as_array
from attnlab.figures.pretrained import head_lines_figure, model_view_figure, thumbnail_levels
from attnlab.figures.screen import share as screen_share
from attnlab.limits import MAX_DRAWN_TOKENS
from attnlab.pretrained import PATTERNS, head_scores
from attnlab.pretrained import rollout as rollout_of
from attnlab.sources import CAUSAL, AttentionSource, has_qk, kind_of, kv_head, shares_tokens, window_of
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import chart, selectbox
from attnlab.ui.parts.headviews import head_finder, model_view_chart, rollout_charts
from attnlab.ui.parts.qkview import head_notes, qk_panel, qk_title

VIEWS = links.SOURCE_VIEWS  # every view of a source; `applies` says which one can draw
KEPT = 16  # sources whose thumbnails and head scores a server keeps (small: (L, H, side, side) and (P, L, H))
ROLLOUTS_KEPT = 4  # sources whose rollouts a server keeps (each (L, T, T))


@dataclass(frozen=True, eq=False)
class Shown:
    """A source on a page: the page's state, its locale prefix, the source and the digest its numbers are cached by."""

    page: PageState
    words: str
    source: AttentionSource
    digest: str

    def say(self, name: str, **fmt: object) -> str:
        """One of the page's own sentences (`<words>.<name>`) in this session's language."""
        return t(f"{self.words}.{name}", **fmt)

    @property
    def weights(self) -> np.ndarray:
        """Every head's weights as a float32 array (L, H, T_q, T_k): a view of the tensor, never a copy to change."""
        return as_array(self.source.attentions)


@st.cache_resource(show_spinner=False, max_entries=KEPT)
def thumbnails(digest: str, _source: AttentionSource) -> np.ndarray:
    """Every map pooled to a thumbnail (read-only numbers; colours and labels are added per session)."""
    levels = thumbnail_levels(as_array(_source.attentions))  # (L, H, side, side)
    levels.setflags(write=False)
    return levels


@st.cache_resource(show_spinner=False, max_entries=KEPT)
def scores(digest: str, _source: AttentionSource) -> np.ndarray:
    """Every head finder score of a source, (P, L, H), read-only (shared by every session)."""
    values = head_scores(_source.attentions, _source.tokens).values.numpy()
    values.setflags(write=False)
    return values


@st.cache_resource(show_spinner=False, max_entries=ROLLOUTS_KEPT)
def rollout(digest: str, _source: AttentionSource) -> np.ndarray:
    """The rollout after every layer, (L, T, T), read-only (shared by every session)."""
    rolled = rollout_of(_source.attentions).numpy()
    rolled.setflags(write=False)
    return rolled


def applies(view: str, source: AttentionSource) -> bool:
    """The query-key map needs queries and keys; head finder and rollout one list of tokens on both sides."""
    if view == "qk":
        return has_qk(source)
    return shares_tokens(source) if view in ("finder", "rollout") else view in VIEWS


def picked(shown: Shown) -> tuple[int, int, int | None, int | None]:
    """Layer and head (0-based), the followed query and key (0-based, or None: none, or past this source's end)."""
    page, (_, _, t_q, t_k) = shown.page, shown.source.attentions.shape
    q = page["q"]
    k = page["k"] if "k" in page.params else 0
    return page["layer"] - 1, page["head"] - 1, (q - 1 if 1 <= q <= t_q else None), (k - 1 if 1 <= k <= t_k else None)


def layer_picker(shown: Shown, where: object = st) -> None:
    """Layers 1..L of this source."""
    n_layers = shown.source.attentions.shape[0]
    selectbox(shown.page, "layer", shown.say("layer"), where=where, options=list(range(1, n_layers + 1)))


def pickers(shown: Shown, follow_key: bool = True) -> None:
    """Layer, head, the query and (where the page follows keys) the key to follow, side by side."""
    page, source = shown.page, shown.source
    follow_key = follow_key and "k" in page.params
    cols = st.columns(4 if follow_key else 3)
    layer_picker(shown, where=cols[0])
    heads = list(range(1, source.attentions.shape[1] + 1))
    selectbox(page, "head", shown.say("head"), where=cols[1], options=heads)
    queries = {0: shown.say("every_query")} | {i + 1: f"{i + 1}: {tok}" for i, tok in enumerate(source.tokens)}
    selectbox(page, "q", shown.say("query"), where=cols[2], options=list(queries), labels=queries)
    if follow_key:
        keys = {0: shown.say("no_key")} | {j + 1: f"{j + 1}: {tok}" for j, tok in enumerate(source.tokens_k)}
        selectbox(page, "k", shown.say("key"), where=cols[3], options=list(keys), labels=keys)


def model_view(shown: Shown) -> None:
    """Every layer x head at once, in this session's language and palette; a click on one opens it."""
    layer, head, _, _ = picked(shown)
    st.caption(shown.say("model_help"))
    levels = thumbnails(shown.digest, shown.source)
    figure = model_view_figure(shown.weights, shown.say("layer"), shown.say("head"), (layer, head), levels)
    model_view_chart(shown.page, figure)


def too_long(source: AttentionSource, message: str) -> bool:
    """More tokens than a page draws as heatmaps and full line sets (a long upload): say so once."""
    longest = max(source.attentions.shape[-2:])
    if longest <= MAX_DRAWN_TOKENS:
        return False
    st.info(t(f"attnfile.{message}", n=longest, cap=MAX_DRAWN_TOKENS), icon=":material/info:")
    return True


def head_view(shown: Shown) -> None:
    """One head as a heatmap and as bertviz's lines; cross attention keeps the target left and the source right."""
    pickers(shown)
    source, key_of = shown.source, shown.page.key
    layer, head, query, key = picked(shown)
    weights = shown.weights[layer, head]  # (T_q, T_k)
    sides = (t("attnfile.target"), t("attnfile.source_side")) if kind_of(source) == "cross" else None
    long = too_long(source, "too_long")
    if long and query is None and key is None:
        query = 0  # one token's lines, never all T_q x T_k
    lines = head_lines_figure(weights, source.tokens, query, shown.say("lines_title"), source.tokens_k, key, sides)
    if long:
        chart(lines, key_of("head_lines"))
        return
    left, right = st.columns([3, 2])
    with left, screen_share(3 / 5):  # the map laid out for its column
        chart(
            matrix_figure(
                weights,
                list(source.tokens),
                list(source.tokens_k),
                kind="prob",
                title=shown.say("head_title", layer=layer + 1, head=head + 1),
                highlight_row=query,
                row_name=t("stages.query"),
                col_name=t("stages.key"),
            ),
            key_of("head_map"),
        )
    with right:
        chart(lines, key_of("head_lines"))
    st.caption(shown.say("lines_help"))


def qk_view(shown: Shown) -> None:
    """The query-key map of the chosen head, from the source's own queries and keys; a clicked query is followed."""
    pickers(shown, follow_key=False)
    layer, head, query, _ = picked(shown)
    source, page = shown.source, shown.page

    def pick(i: int) -> None:
        page["q"] = i + 1

    causal = kind_of(source) in CAUSAL
    rule = source.rule(layer) if hasattr(source, "rule") else (None, None, None)
    qk_panel(
        np.asarray(source.queries[layer, head], dtype=np.float32),
        np.asarray(source.keys[layer, kv_head(source, head)], dtype=np.float32),  # the key/value head it reads
        shown.weights[layer, head],
        list(source.tokens),
        list(source.tokens_k),
        query,
        causal=causal,
        title=qk_title(layer, head, source.attentions.size(1), source.keys.size(1)),
        key=page.key("qk_chart"),
        pick=pick,
        window=window_of(source, layer) if causal else None,
        notes=head_notes(source.attentions.size(1), source.keys.size(1), head, rule),
    )


def finder(shown: Shown) -> None:
    """Rank every head by one pattern score; picking a row opens that head."""
    grids = scores(shown.digest, shown.source)  # (patterns, L, H)
    head_finder(shown.page, lambda pattern: grids[PATTERNS.index(pattern)], shown.say("layer"), shown.say("head"))


def rollout_view(shown: Shown) -> None:
    """One layer's head-averaged attention beside the rollout up to that layer."""
    layer_picker(shown)
    layer = shown.page["layer"] - 1
    if too_long(shown.source, "too_long_rollout"):
        return
    raw = shown.weights[layer].mean(axis=0)  # (T, T)
    rolled = rollout(shown.digest, shown.source)[layer]  # (T, T)
    rollout_charts(shown.page, list(shown.source.tokens), raw, rolled, layer)


DRAW = {"model": model_view, "head": head_view, "qk": qk_view, "finder": finder, "rollout": rollout_view}


def draw(view: str, shown: Shown) -> None:
    """The named view of the source (one of VIEWS that `applies` to it)."""
    DRAW[view](shown)
