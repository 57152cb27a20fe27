"""Figures of attention from any model (an AttentionFile or its arrays): model view, head view, query-key map.

The `*_figure` builders return light prebuilt specs (what the app draws); `model_view`, `head_view` and
`query_key_map` are the notebook API: they take an `attnlab.attnfile.AttentionFile` and return full Plotly
figures, so `query_key_map(files["self"], 2, 5).show()` works in Jupyter without Streamlit. `head_view` and
`model_view` also take bertviz's call shape, `(outputs.attentions, tokens)` (batch item 0 drawn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlab.attnfile.capture import from_attentions
from attnlab.figures.matrix import BASE_LAYOUT, Prebuilt, colorscale
from attnlab.figures.palette import current
from attnlab.figures.pretrained import head_lines_figure, model_view_figure
from attnlab.figures.text import esc, label
from attnlab.qkmap import NEAREST, Agreement, QKMap, agreement, qk_map
from attnlab.sources import kv_head, window_of

NAMES = {  # the notebook's English words; the app passes its translated ones
    "layer": "Layer",
    "head": "Head",
    "query": "query",
    "key": "key",
    "position": "position",
    "picked": "picked query",
    "nearest": "nearest keys",
    "attended": "most attended",
    "axis": "PC {n} ({share:.0%} of the variance)",
    "kv_head": "key/value head",
}


def as_array(values: Any) -> np.ndarray:
    """A tensor or an array as a float32 numpy array (torch tensors are read, never changed)."""
    return values.detach().cpu().numpy() if hasattr(values, "detach") else np.asarray(values, dtype=np.float32)


def point_trace(xy: np.ndarray, tokens: Sequence[str], kind: str, symbol: str, outline: str, names: dict) -> dict:
    """One kind's points (queries or keys), filled by position on the palette's sequential scale."""
    n = len(tokens)
    hover = [f"{esc(names[kind])} {i + 1}: {label(tok, 24)}" for i, tok in enumerate(tokens)]
    return dict(
        type="scatter",
        x=xy[:, 0].tolist(),
        y=xy[:, 1].tolist(),
        mode="markers",
        name=esc(names[kind]),
        text=hover,
        customdata=[[kind, i] for i in range(n)],
        hovertemplate="%{text}<extra></extra>",
        marker=dict(
            symbol=symbol,
            size=11,
            color=list(range(n)),
            colorscale=colorscale(current().positive),
            cmin=0,
            cmax=max(1, n - 1),
            line=dict(color=outline, width=2),
            showscale=kind == "key",
            colorbar=dict(title=dict(text=esc(names["position"])), thickness=12, len=0.6),
        ),
    )


def qk_map_figure(
    qk: QKMap,
    tokens: Sequence[str],
    tokens_k: Sequence[str],
    weights: np.ndarray,
    query: int | None,
    found: Agreement | None,
    names: dict = NAMES,
    title: str = "",
) -> Prebuilt:
    """Queries (circles) and keys (diamonds) of one head; a picked query's nearest keys ringed, its top keys linked."""
    palette = current()
    data = [
        point_trace(qk.xy_q, tokens, "query", "circle", palette.line(0), names),
        point_trace(qk.xy_k, tokens_k, "key", "diamond", palette.line(1), names),
    ]
    if query is not None and found is not None:
        x0, y0 = qk.xy_q[query].tolist()
        for j in found.top.tolist():
            data.append(
                dict(
                    type="scatter",
                    x=[x0, float(qk.xy_k[j, 0])],
                    y=[y0, float(qk.xy_k[j, 1])],
                    mode="lines",
                    hoverinfo="skip",
                    showlegend=False,
                    line=dict(color=palette.neutral, width=1 + 5 * float(weights[query, j])),
                )
            )
        data[-len(found.top)]["showlegend"], data[-len(found.top)]["name"] = True, esc(names["attended"])
        ring = dict(color=palette.highlight, size=22, line=dict(color=palette.highlight, width=3))  # open symbols
        data.append(
            dict(
                type="scatter",
                x=qk.xy_k[found.nearest, 0].tolist(),
                y=qk.xy_k[found.nearest, 1].tolist(),
                mode="markers",
                name=esc(names["nearest"]),
                hoverinfo="skip",
                marker=dict(ring, symbol="circle-open"),
            )
        )
        data.append(
            dict(
                type="scatter",
                x=[x0],
                y=[y0],
                mode="markers",
                name=esc(names["picked"]),
                hoverinfo="skip",
                marker=dict(ring, symbol="square-open", size=24),
            )
        )
    axis = dict(zeroline=False, showgrid=True, gridcolor=palette.grid)
    layout = dict(
        BASE_LAYOUT,
        title=dict(text=label(title, 80), x=0.0),
        height=520,
        xaxis=dict(axis, title=esc(names["axis"].format(n=1, share=qk.explained[0]))),
        yaxis=dict(axis, title=esc(names["axis"].format(n=2, share=qk.explained[1])), scaleanchor="x"),
        legend=dict(orientation="h", y=-0.15),
        clickmode="event+select",
    )
    return Prebuilt(dict(data=data, layout=layout))


def head_map(file: Any, layer: int, head: int, query: int | None, causal: bool) -> tuple[QKMap, Agreement | None]:
    """The query-key map of one head of a file with queries and keys, and the picked query's agreement.

    With grouped heads the keys are those of the key/value head the query head reads (`kv_head`); a window the
    file states for the layer limits the keys a query can see, as the causal mask does.
    """
    if file.queries is None or file.keys is None:
        raise ValueError("this attention file has no queries and keys (save it with queries= and keys=)")
    qk = qk_map(as_array(file.queries[layer, head]), as_array(file.keys[layer, kv_head(file, head)]))
    weights = as_array(file.attentions[layer, head])
    window = window_of(file, layer) if causal else None
    found = None if query is None else agreement(qk, weights, query, causal=causal, n=NEAREST, window=window)
    return qk, found


def as_file(attention: Any, tokens: Any = None, tokens_k: Any = None) -> Any:
    """An attention file as it is, or bertviz's (outputs.attentions, tokens) as one (batch item 0)."""
    if hasattr(attention, "attentions"):
        if tokens is not None or tokens_k is not None:
            raise ValueError("an attention file carries its own tokens: pass the file alone")
        return attention
    if tokens is None:
        raise ValueError("bertviz's call shape needs the tokens: head_view(outputs.attentions, tokens)")
    return from_attentions(attention, tokens, tokens_k)


def model_view(
    attention: Any, tokens: Any = None, *, picked: tuple[int, int] | None = None, tokens_k: Any = None
) -> go.Figure:
    """Every layer x head as small maps: `model_view(file)`, or bertviz's `model_view(outputs.attentions, tokens)`.

    `tokens` is bertviz's second argument (the file form takes none; an old positional `picked` still works).
    """
    if isinstance(tokens, tuple) and len(tokens) == 2 and all(isinstance(i, int) for i in tokens):
        tokens, picked = None, tokens  # model_view(file, (layer, head)): the call before bertviz's shape
    file = as_file(attention, tokens, tokens_k)
    return model_view_figure(as_array(file.attentions), NAMES["layer"], NAMES["head"], picked).figure()


def head_view(attention: Any, *args: Any, **kw: Any) -> go.Figure:
    """One head as lines from query tokens (left) to key tokens (right), layers and heads counted from 0.

    Two call shapes: `head_view(file, layer=0, head=0, query=None, key=None)` with an attention file, and bertviz's
    `head_view(outputs.attentions, tokens, layer=0, head=0, query=None, key=None, tokens_k=None)`: a tuple over
    layers of (batch, heads, T_q, T_k) tensors, batch item 0 drawn (`tokens_k`: the source's tokens for cross).
    """
    if hasattr(attention, "attentions"):
        return _head_view(attention, *args, **kw)
    return _head_view_layers(attention, *args, **kw)


def _head_view_layers(
    attention: Any,
    tokens: Any,
    layer: int = 0,
    head: int = 0,
    query: int | None = None,
    key: int | None = None,
    *,
    tokens_k: Any = None,
) -> go.Figure:
    """bertviz's call shape: the layers and tokens made a file, then drawn as one."""
    return _head_view(as_file(attention, tokens, tokens_k), layer, head, query, key)


def _head_view(file: Any, layer: int = 0, head: int = 0, query: int | None = None, key: int | None = None) -> go.Figure:
    """The head view of an attention file."""
    n_layers, n_heads = file.attentions.shape[:2]
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise ValueError(f"layer {layer}, head {head} outside {n_layers} layers x {n_heads} heads (counted from 0)")
    weights = as_array(file.attentions[layer, head])  # (T_q, T_k)
    title = f"{NAMES['layer']} {layer + 1} · {NAMES['head']} {head + 1}"
    return head_lines_figure(weights, file.tokens, query, title, tokens_k=file.tokens_k, key=key).figure()


def query_key_map(file: Any, layer: int, head: int, query: int = 0, causal: bool | None = None) -> go.Figure:
    """One head's queries and keys in a joint 2-D PCA; the picked query's nearest and most attended keys marked.

    `causal` defaults to the file's own flag. For grouped heads the title names the key/value head the query head
    reads; the vectors are the ones the scores used (after RoPE in a rotary model).
    """
    causal = bool(getattr(file, "causal", False)) if causal is None else causal
    qk, found = head_map(file, layer, head, query, causal)
    weights = as_array(file.attentions[layer, head])
    title = f"{NAMES['layer']} {layer + 1} · {NAMES['head']} {head + 1}"
    if file.keys.size(1) != file.attentions.size(1):
        title += f" · {NAMES['kv_head']} {kv_head(file, head) + 1}"
    return qk_map_figure(qk, file.tokens, file.tokens_k, weights, query, found, NAMES, title).figure()
