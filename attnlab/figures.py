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

Kind = Literal["signed", "prob", "positive"]
SCALES = {"signed": "RdBu_r", "prob": "Blues", "positive": "Viridis"}
BLOCKED_COLOUR = "#c8c8c8"
TEXT_CELLS = 160  # write each cell's value on the chart when the matrix is at most this big
BIG_CELLS = 1024  # above this many cells a chart sends float32 instead of float64

BASE_LAYOUT = dict(
    template="none",
    font=dict(family="Noto Sans, Noto Sans CJK SC, sans-serif", size=13),
    margin=dict(l=10, r=10, t=36, b=10),
    paper_bgcolor="rgba(0,0,0,0)",
    plot_bgcolor="rgba(0,0,0,0)",
)
pio.templates["attnlab"] = go.layout.Template(layout={k: v for k, v in BASE_LAYOUT.items() if k != "template"})


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


def unique_labels(texts: Sequence[str], width: int = 16) -> list[str]:
    """Escaped, shortened labels made distinct with zero-width spaces, so repeated tokens stay separate rows."""
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        base = label(text, width)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(base + "\u200b" * n)
    return out


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
) -> list[dict]:
    """The heatmap of `m` plus, where `m` is -inf, a grey layer that says the cell is blocked.

    Traces are plain dicts: building Plotly objects property by property costs more than
    the rest of a Playground rerun.
    """
    m = np.asarray(m, dtype=np.float64)
    blocked = np.isneginf(m)
    z = np.where(blocked, np.nan, m)
    z = z if z.size <= BIG_CELLS else z.astype(np.float32)  # halves the bytes of big charts
    text = m.size <= TEXT_CELLS if text is None else text
    x, y = unique_labels(cols), unique_labels(rows)
    where = f"{row_name}: <b>%{{y}}</b><br>{col_name}: <b>%{{x}}</b><br>"
    value = "%{z:.3f}" if kind == "prob" else "%{z:.4g}"
    extra = {} if hover_extra is None else {"customdata": np.array(hover_extra, dtype=object)}
    traces = [
        dict(
            type="heatmap",
            z=z,
            x=x,
            y=y,
            colorscale=SCALES[kind],
            showscale=showscale,
            texttemplate="%{z:.2f}" if text else None,
            xgap=1,
            ygap=1,
            hovertemplate=where + value + ("%{customdata}" if extra else "") + "<extra></extra>",
            colorbar=dict(thickness=10, len=0.9),
            **extra,
            **_zrange(m, kind),
        )
    ]
    if blocked.any():
        traces.append(
            dict(
                type="heatmap",
                z=np.where(blocked, 1.0, np.nan),
                x=x,
                y=y,
                showscale=False,
                colorscale=[[0, BLOCKED_COLOUR], [1, BLOCKED_COLOUR]],
                name="blocked",
                text=np.where(blocked, "−∞", "").tolist(),
                texttemplate="%{text}",
                xgap=1,
                ygap=1,
                textfont=dict(color="#444"),
                hovertemplate=where + f"−∞ ({blocked_text})<extra></extra>",
            )
        )
    return traces


def _axes(n_cols: int, x_domain=None, y_domain=None, anchor: str = "") -> tuple[dict, dict]:
    """Category axes in token order, row 0 on top, slanted labels when there are many columns."""
    x = dict(showgrid=False, zeroline=False, tickangle=-45 if n_cols > 8 else 0, type="category")
    y = dict(autorange="reversed", showgrid=False, zeroline=False, type="category")
    if x_domain is not None:
        x.update(domain=x_domain, anchor=f"y{anchor}")
        y.update(domain=y_domain, anchor=f"x{anchor}")
    return x, y


def _height(n_rows: int) -> int:
    """Tall enough for readable rows, short enough to keep the page scannable."""
    return int(min(720, max(200, 60 + 26 * n_rows)))


def _row_outline(row: int | None, n_rows: int, n_cols: int, suffix: str = "") -> list[dict]:
    """A rectangle around one row of a heatmap (none when `row` is None or out of range)."""
    if row is None or not 0 <= row < n_rows:
        return []
    return [
        dict(
            type="rect",
            x0=-0.5,
            x1=n_cols - 0.5,
            y0=row - 0.5,
            y1=row + 0.5,
            xref=f"x{suffix}",
            yref=f"y{suffix}",
            line=dict(color="#e8590c", width=3),
            fillcolor="rgba(0,0,0,0)",
        )
    ]


def matrix_figure(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str | None = None,
    col_breaks: Sequence[int] = (),
    highlight_row: int | None = None,
    **kw,
) -> go.Figure:
    """One matrix as a heatmap with token labels on both axes.

    Thick rules stand before the `col_breaks` columns; `highlight_row` outlines one row (the
    query token the user picked), so it can be followed from stage to stage.
    """
    xaxis, yaxis = _axes(len(cols))
    layout = dict(BASE_LAYOUT, xaxis=xaxis, yaxis=yaxis, height=_height(len(rows)), title=dict(text=title, x=0.0))
    layout["shapes"] = [
        dict(type="line", x0=c - 0.5, x1=c - 0.5, y0=0, y1=1, xref="x", yref="paper", line=dict(color="#222", width=2))
        for c in col_breaks
    ] + _row_outline(highlight_row, len(rows), len(cols))
    return go.Figure(data=heatmap_traces(m, rows, cols, **kw), layout=layout)


def grid_figure(
    mats: Sequence[np.ndarray],
    titles: Sequence[str],
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    hover_extra: Sequence[Sequence[Sequence[str]] | None] | None = None,
    highlight_row: int | None = None,
    **kw,
) -> go.Figure:
    """Several same-kind matrices side by side (e.g. one per head) sharing one colour scale."""
    n = len(mats)
    per_row = min(n, 4)
    n_rows = -(-n // per_row)
    gap_x, gap_y = 0.05, 0.12 / n_rows
    width, height = (1 - gap_x * (per_row - 1)) / per_row, (1 - gap_y * (n_rows - 1)) / n_rows
    shared = _zrange(np.concatenate([np.asarray(m, dtype=float).ravel() for m in mats]), kw.get("kind", "signed"))
    data, layout = [], dict(BASE_LAYOUT, height=_height(len(rows)) * n_rows, annotations=[], shapes=[])
    layout["margin"] = dict(BASE_LAYOUT["margin"], t=40)
    for i, m in enumerate(mats):
        r, c = divmod(i, per_row)
        x0, y1 = c * (width + gap_x), 1 - r * (height + gap_y)
        suffix = "" if i == 0 else str(i + 1)
        layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"] = _axes(
            len(cols), [x0, x0 + width], [y1 - height, y1], suffix
        )
        layout[f"yaxis{suffix}"]["showticklabels"] = c == 0  # the panels of a row share their row labels
        extra = hover_extra[i] if hover_extra else None
        traces = heatmap_traces(m, rows, cols, hover_extra=extra, showscale=i == 0, **kw)
        traces[0].update(shared)  # traces[0] is the values; any other is the blocked layer
        data += [dict(trace, xaxis=f"x{suffix}", yaxis=f"y{suffix}") for trace in traces]
        layout["shapes"] += _row_outline(highlight_row, len(rows), len(cols), suffix)
        layout["annotations"].append(
            dict(
                text=label(titles[i], 40),
                x=x0 + width / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=14),
            )
        )
    return go.Figure(data=data, layout=layout)


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
