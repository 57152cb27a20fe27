"""Plotly figures for matrices: token-labelled heatmaps whose hover says where each number came from.

No Streamlit here: figures are plain `go.Figure`s that tests can inspect. User text reaches
Plotly only through `label()`, which escapes it, because Plotly renders some HTML in labels.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Literal

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

Kind = Literal["signed", "prob", "positive"]
SCALES = {"signed": "RdBu_r", "prob": "Blues", "positive": "Viridis"}
BLOCKED_COLOUR = "#c8c8c8"
TEXT_CELLS = 160  # write each cell's value on the chart when the matrix is at most this big

pio.templates["attnlab"] = go.layout.Template(
    layout=dict(
        font=dict(family="Noto Sans, Noto Sans CJK SC, sans-serif", size=13),
        margin=dict(l=10, r=10, t=36, b=10),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
    )
)


def label(text: str, width: int = 14) -> str:
    """Token text made safe for Plotly (escaped, so `<b>` shows as `<b>`) and cut to `width`."""
    short = text if len(text) <= width else text[: width - 1] + "…"
    return html.escape(short, quote=False)


def dim_labels(n: int, prefix: str = "d") -> list[str]:
    """Column names for feature dimensions: d0, d1, ..."""
    return [f"{prefix}{i}" for i in range(n)]


def _zrange(m: np.ndarray, kind: Kind) -> dict:
    """Colour range: 0..1 for probabilities, symmetric around 0 for signed values."""
    finite = m[np.isfinite(m)]
    if kind == "prob":
        return dict(zmin=0.0, zmax=1.0)
    if kind == "signed":
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        bound = bound or 1.0
        return dict(zmin=-bound, zmax=bound, zmid=0.0)
    return {}


def _hover_data(rows: Sequence[str], cols: Sequence[str], extra: Sequence[Sequence[str]] | None) -> np.ndarray:
    """customdata[i][j] = (row label, column label, extra text) for the hover template."""
    r, c = len(rows), len(cols)
    data = np.empty((r, c, 3), dtype=object)
    data[:, :, 0] = np.array([label(s, 40) for s in rows], dtype=object)[:, None]
    data[:, :, 1] = np.array([label(s, 40) for s in cols], dtype=object)[None, :]
    data[:, :, 2] = np.array(extra, dtype=object) if extra is not None else ""
    return data


def heatmap_traces(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: Kind = "signed",
    row_name: str = "row",
    col_name: str = "col",
    hover_extra: Sequence[Sequence[str]] | None = None,
    blocked_text: str = "blocked",
    showscale: bool = True,
    text: bool | None = None,
) -> list[go.Heatmap]:
    """The heatmap of `m` plus, where `m` is -inf, a grey layer that says the cell is blocked."""
    m = np.asarray(m, dtype=np.float64)
    blocked = np.isneginf(m)
    z = np.where(blocked, np.nan, m)
    text = m.size <= TEXT_CELLS if text is None else text
    x, y = np.arange(m.shape[1]), np.arange(m.shape[0])
    custom = _hover_data(rows, cols, hover_extra)
    value = "%{z:.3f}" if kind == "prob" else "%{z:.4g}"
    traces = [
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            customdata=custom,
            colorscale=SCALES[kind],
            showscale=showscale,
            texttemplate="%{z:.2f}" if text else None,
            xgap=1,
            ygap=1,
            hovertemplate=f"{row_name}: <b>%{{customdata[0]}}</b><br>{col_name}: <b>%{{customdata[1]}}</b>"
            f"<br>{value}%{{customdata[2]}}<extra></extra>",
            colorbar=dict(thickness=10, len=0.9),
            **_zrange(m, kind),
        )
    ]
    if blocked.any():
        traces.append(
            go.Heatmap(
                z=np.where(blocked, 1.0, np.nan),
                x=x,
                y=y,
                customdata=custom,
                colorscale=[[0, BLOCKED_COLOUR], [1, BLOCKED_COLOUR]],
                showscale=False,
                texttemplate="−∞",
                xgap=1,
                ygap=1,
                textfont=dict(color="#444"),
                hovertemplate=f"{row_name}: <b>%{{customdata[0]}}</b><br>{col_name}: <b>%{{customdata[1]}}</b>"
                f"<br>−∞ ({blocked_text})<extra></extra>",
            )
        )
    return traces


def _axes(fig: go.Figure, rows: Sequence[str], cols: Sequence[str], **where) -> None:
    """Token names as tick labels (by position, so repeated tokens stay separate rows); row 0 on top."""
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(cols))),
        ticktext=[label(c) for c in cols],
        showgrid=False,
        zeroline=False,
        tickangle=-45 if len(cols) > 8 else 0,
        **where,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(rows))),
        ticktext=[label(r) for r in rows],
        autorange="reversed",
        showgrid=False,
        zeroline=False,
        **where,
    )


def _height(n_rows: int) -> int:
    """Tall enough for readable rows, short enough to keep the page scannable."""
    return int(min(720, max(200, 60 + 26 * n_rows)))


def matrix_figure(
    m: np.ndarray, rows: Sequence[str], cols: Sequence[str], *, title: str | None = None, **kw
) -> go.Figure:
    """One matrix as a heatmap with token labels on both axes."""
    fig = go.Figure(heatmap_traces(m, rows, cols, **kw))
    _axes(fig, rows, cols)
    fig.update_layout(template="attnlab", height=_height(len(rows)), title=dict(text=title, x=0.0))
    return fig


def grid_figure(
    mats: Sequence[np.ndarray],
    titles: Sequence[str],
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    hover_extra: Sequence[Sequence[Sequence[str]] | None] | None = None,
    **kw,
) -> go.Figure:
    """Several same-kind matrices side by side (e.g. one per head) sharing one colour scale."""
    n = len(mats)
    per_row = min(n, 4)
    n_rows = -(-n // per_row)
    fig = make_subplots(
        rows=n_rows,
        cols=per_row,
        subplot_titles=list(titles),
        horizontal_spacing=0.04 + 0.02 * (per_row < 3),
        vertical_spacing=0.12 / n_rows,
    )
    kind = kw.get("kind", "signed")
    shared = _zrange(np.concatenate([np.asarray(m, dtype=float).ravel() for m in mats]), kind)
    for i, m in enumerate(mats):
        extra = hover_extra[i] if hover_extra else None
        traces = heatmap_traces(m, rows, cols, hover_extra=extra, showscale=i == 0, **kw)
        traces[0].update(**shared)  # traces[0] is the values; any other is the blocked layer
        for trace in traces:
            fig.add_trace(trace, row=i // per_row + 1, col=i % per_row + 1)
        _axes(fig, rows, cols, row=i // per_row + 1, col=i % per_row + 1)
    fig.update_layout(template="attnlab", height=_height(len(rows)) * n_rows, margin=dict(t=40))
    return fig


def head_columns_figure(d_model: int, n_heads: int, head_names: Sequence[str]) -> go.Figure:
    """A strip over W's columns coloured by the head that owns them."""
    d_k = d_model // n_heads
    owner = np.repeat(np.arange(n_heads), d_k)[None, :]
    fig = go.Figure(
        go.Heatmap(
            z=owner,
            colorscale="Turbo" if n_heads > 1 else [[0, "#4c78a8"], [1, "#4c78a8"]],
            showscale=False,
            xgap=1,
            customdata=np.array([[head_names[h] for h in owner[0]]], dtype=object),
            hovertemplate="%{customdata}<extra></extra>",
            text=[[head_names[h] for h in owner[0]]],
            texttemplate="%{text}" if d_k >= 2 else None,
        )
    )
    fig.update_xaxes(tickmode="array", tickvals=list(range(d_model)), ticktext=dim_labels(d_model))
    fig.update_yaxes(visible=False)
    fig.update_layout(template="attnlab", height=90, margin=dict(t=10, b=10))
    return fig
