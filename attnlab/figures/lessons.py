"""Plotly figures for the lesson pages (no Streamlit): bars, sweeps, planes and the sinusoid table.

Titles and names arrive translated from the page; anything a user typed reaches Plotly only through
`figures.text`. Colours come from the current palette.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlab.figures.lines import LEGEND_BELOW, layout
from attnlab.figures.palette import current
from attnlab.figures.prebuilt import new_figure
from attnlab.figures.text import esc as _esc
from attnlab.figures.text import label


def weights_bar(
    names: Sequence[str],
    weights: Sequence[float],
    title: str,
    value_name: str | None = None,
    values: Sequence[float] | None = None,
) -> go.Figure:
    """One attention row as bars (0..1), each bar labelled with its weight (and the value it carries)."""
    p = current()
    text = [f"{w:.3f}" for w in weights]
    if values is not None and value_name:
        text = [f"{w:.3f} · {_esc(value_name)} {v:g}" for w, v in zip(weights, values, strict=True)]
    fig = new_figure(
        go.Bar(
            x=[label(n, 24) for n in names],
            y=list(weights),
            text=text,
            textposition="outside",
            marker_color=[p.line(i) for i in range(len(names))],
            hovertemplate="%{x}: %{y:.4f}<extra></extra>",
        )
    )
    fig.update_yaxes(range=[0, 1.15], title=None)
    return layout(fig, title, 300, showlegend=False)


def temperature_figure(
    temps: Sequence[float],
    weights: np.ndarray,
    names: Sequence[str],
    chosen: float,
    title: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """Each key's weight as the temperature changes; a dashed line at the user's temperature."""
    p = current()
    fig = new_figure()
    for i, name in enumerate(names):
        fig.add_trace(
            go.Scatter(
                x=list(temps),
                y=weights[:, i],
                mode="lines",
                name=label(name, 24),
                line=dict(color=p.line(i), width=2.5),
            )
        )
    fig.add_vline(x=chosen, line_dash="dash", line_color=p.neutral)
    fig.update_xaxes(title=_esc(x_title))
    fig.update_yaxes(title=_esc(y_title), range=[-0.02, 1.02])
    return layout(fig, title, 320)


def key_plane(keys: np.ndarray, names: Sequence[str], query: Sequence[float], query_name: str, title: str) -> go.Figure:
    """2-D keys and the query as arrows from the origin: the key most aligned with q gets the most weight."""
    p = current()
    fig = new_figure()
    pts = [*(tuple(k) for k in keys), tuple(query)]
    all_names = [*names, query_name]
    for i, ((x, y), name) in enumerate(zip(pts, all_names, strict=True)):
        colour = p.rule if i == len(pts) - 1 else p.line(i)
        fig.add_trace(
            go.Scatter(
                x=[0, x],
                y=[0, y],
                mode="lines+markers+text",
                name=label(name, 24),
                text=["", label(name, 24)],
                textposition="top center",
                line=dict(color=colour, width=3, dash="dot" if i == len(pts) - 1 else "solid"),
                marker=dict(size=[0, 10]),
            )
        )
    bound = max(1.0, float(np.abs(np.array(pts)).max()) * 1.25)
    fig.update_xaxes(range=[-bound, bound], zeroline=True, showgrid=True, gridcolor=p.grid)
    fig.update_yaxes(range=[-bound, bound], zeroline=True, showgrid=True, gridcolor=p.grid, scaleanchor="x")
    return layout(fig, title, 360, showlegend=False)


def variance_figure(
    d_k: np.ndarray,
    var_raw: np.ndarray,
    err: np.ndarray,
    var_scaled: np.ndarray,
    user_dk: int,
    names: dict[str, str],
    title: str,
) -> go.Figure:
    """Measured Var(q.k) against d_k on log-log axes, the line Var = d_k, and the scaled variance (~1)."""
    p = current()
    fig = new_figure()
    fig.add_trace(
        go.Scatter(x=d_k, y=d_k, mode="lines", name=_esc(names["theory"]), line=dict(color=p.neutral, dash="dash"))
    )
    fig.add_trace(
        go.Scatter(
            x=d_k,
            y=var_raw,
            mode="markers",
            name=_esc(names["raw"]),
            error_y=dict(type="data", array=2 * err, visible=True),
            marker=dict(size=9, color=p.line(3)),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=d_k, y=var_scaled, mode="lines+markers", name=_esc(names["scaled"]), marker=dict(size=7, color=p.line(0))
        )
    )
    fig.add_vline(x=user_dk, line_dash="dot", line_color=p.neutral)
    fig.update_xaxes(type="log", title="d_k")
    fig.update_yaxes(type="log", title=_esc(names["y"]))
    return layout(fig, title, 360)


def saturation_figure(
    d_k: Sequence[int], curves: dict[str, dict[str, np.ndarray]], user_dk: int, names: dict[str, str], n_keys: int
) -> go.Figure:
    """Max weight, entropy and softmax-gradient size vs d_k, unscaled against scaled."""
    p = current()
    metrics = ("max_weight", "entropy", "grad_norm")
    fig = make_subplots(
        figure=new_figure(), rows=1, cols=3, subplot_titles=[_esc(names[m]) for m in metrics], horizontal_spacing=0.08
    )
    for col, m in enumerate(metrics, start=1):
        for variant, colour in (("unscaled", p.line(3)), ("scaled", p.line(0))):
            fig.add_trace(
                go.Scatter(
                    x=list(d_k),
                    y=curves[variant][m],
                    mode="lines+markers",
                    name=_esc(names[variant]),
                    line=dict(color=colour),
                    showlegend=col == 1,
                    legendgroup=variant,
                ),
                row=1,
                col=col,
            )
        fig.add_vline(x=user_dk, line_dash="dot", line_color=p.neutral, row=1, col=col)
        fig.update_xaxes(type="log", title="d_k", row=1, col=col)
    fig.add_hline(y=1.0 / n_keys, line_dash="dash", line_color=p.neutral, row=1, col=1)
    fig.add_hline(y=float(np.log(n_keys)), line_dash="dash", line_color=p.neutral, row=1, col=2)
    return layout(fig, None, 370, legend=LEGEND_BELOW)


def rnn_figure(t_max: int, user_t: int, names: dict[str, str], d: int) -> go.Figure:
    """Sequential steps and path length, RNN vs attention, for T = 1..t_max; plus the work each does."""
    p = current()
    ts = np.unique(np.round(np.geomspace(1, t_max, 60)).astype(int))
    fig = make_subplots(
        figure=new_figure(),
        rows=1,
        cols=2,
        subplot_titles=[_esc(names["steps_title"]), _esc(names["flops_title"])],
        horizontal_spacing=0.1,
    )
    fig.add_trace(
        go.Scatter(x=ts, y=ts, name=_esc(names["rnn"]), line=dict(color=p.line(3), width=3), legendgroup="rnn"),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=ts, y=np.ones_like(ts), name=_esc(names["attn"]), line=dict(color=p.line(0), width=3), legendgroup="attn"
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=ts,
            y=2.0 * ts * d * d,
            name=_esc(names["rnn"]),
            line=dict(color=p.line(3), width=3),
            legendgroup="rnn",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            x=ts,
            y=4.0 * ts * ts * d,
            name=_esc(names["attn"]),
            line=dict(color=p.line(0), width=3),
            legendgroup="attn",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    for col in (1, 2):
        fig.add_vline(x=user_t, line_dash="dot", line_color=p.neutral, row=1, col=col)
        fig.update_xaxes(type="log", title="T", row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    return layout(fig, None, 370, legend=LEGEND_BELOW)


def pe_figure(pe: np.ndarray, title: str, x_title: str, y_title: str) -> go.Figure:
    """The sinusoid table as one dense heatmap (no cell gaps: the stripes are the point)."""
    p = current()
    n_pos, d = pe.shape
    fig = new_figure(
        go.Heatmap(
            z=pe,
            x=list(range(d)),
            y=list(range(n_pos)),
            colorscale=p.signed,
            zmin=-1,
            zmax=1,
            zmid=0,
            hovertemplate=f"{_esc(y_title)} %{{y}}, {_esc(x_title)} %{{x}}: %{{z:.4f}}<extra></extra>",
        )
    )
    fig.update_xaxes(title=_esc(x_title), showgrid=False)
    fig.update_yaxes(title=_esc(y_title), autorange="reversed", showgrid=False)
    return layout(fig, title, int(min(560, max(260, 120 + 4 * n_pos))))
