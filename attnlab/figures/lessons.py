"""Plotly figures for the lesson pages (no Streamlit): bars, sweeps, planes and the sinusoid table.

Titles and names arrive translated from the page; anything a user typed reaches Plotly only through
`figures.text`. Colours come from the current palette.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.lines import LEGEND_BELOW, axis_px, line_figure, log_ticks, rule, scatter, subplot_row, suffix
from attnlab.figures.palette import current
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
    bars = dict(
        type="bar",
        x=[label(n, 24) for n in names],
        y=list(weights),
        text=text,
        textposition="outside",
        marker=dict(color=[p.line(i) for i in range(len(names))]),
        hovertemplate="%{x}: %{y:.4f}<extra></extra>",
    )
    return line_figure([bars], dict(yaxis=dict(range=[0, 1.15])), title, 300, showlegend=False)


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
    data = [
        dict(
            type="scatter",
            x=list(temps),
            y=weights[:, i],
            mode="lines",
            name=label(name, 24),
            line=dict(color=p.line(i), width=2.5),
        )
        for i, name in enumerate(names)
    ]
    axes = dict(
        xaxis=dict(title=dict(text=_esc(x_title))),
        yaxis=dict(title=dict(text=_esc(y_title)), range=[-0.02, 1.02]),
        shapes=[rule(x=chosen, dash="dash", color=p.neutral)],
    )
    return line_figure(data, axes, title, 320)


def key_plane(keys: np.ndarray, names: Sequence[str], query: Sequence[float], query_name: str, title: str) -> go.Figure:
    """2-D keys and the query as arrows from the origin: the key most aligned with q gets the most weight."""
    p = current()
    pts = [*(tuple(k) for k in keys), tuple(query)]
    data = []
    for i, ((x, y), name) in enumerate(zip(pts, [*names, query_name], strict=True)):
        is_query = i == len(pts) - 1
        data.append(
            dict(
                type="scatter",
                x=[0, x],
                y=[0, y],
                mode="lines+markers+text",
                name=label(name, 24),
                text=["", label(name, 24)],
                textposition="top center",
                line=dict(color=p.rule if is_query else p.line(i), width=3, dash="dot" if is_query else "solid"),
                marker=dict(size=[0, 10]),
            )
        )
    bound = max(1.0, float(np.abs(np.array(pts)).max()) * 1.25)
    plane = dict(range=[-bound, bound], zeroline=True, showgrid=True, gridcolor=p.grid)
    axes = dict(xaxis=plane, yaxis=dict(plane, scaleanchor="x"))
    return line_figure(data, axes, title, 360, showlegend=False)


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
    data = [
        scatter(d_k, d_k, names["theory"], mode="lines", line=dict(color=p.neutral, dash="dash")),
        scatter(
            d_k,
            var_raw,
            names["raw"],
            mode="markers",
            error_y=dict(type="data", array=2 * err, visible=True),
            marker=dict(size=9, color=p.line(3)),
        ),
        scatter(d_k, var_scaled, names["scaled"], mode="lines+markers", marker=dict(size=7, color=p.line(0))),
    ]
    axes = dict(
        xaxis=dict(type="log", title=dict(text="d_k"), **log_ticks(d_k, axis_px())),
        yaxis=dict(type="log", title=dict(text=_esc(names["y"]))),
        shapes=[rule(x=user_dk, dash="dot", color=p.neutral)],
    )
    return line_figure(data, axes, title, 360)


def saturation_figure(
    d_k: Sequence[int], curves: dict[str, dict[str, np.ndarray]], user_dk: int, names: dict[str, str], n_keys: int
) -> go.Figure:
    """Max weight, entropy and softmax-gradient size vs d_k, unscaled against scaled."""
    p = current()
    metrics = ("max_weight", "entropy", "grad_norm")
    axes = subplot_row([_esc(names[m]) for m in metrics], 0.08)
    ticks = log_ticks(d_k, axis_px(width=(1 - 0.08 * 2) / 3))
    data = []
    for col, m in enumerate(metrics, start=1):
        n = suffix(col)
        for variant, colour in (("unscaled", p.line(3)), ("scaled", p.line(0))):
            style = dict(
                line=dict(color=colour), showlegend=col == 1, legendgroup=variant, xaxis=f"x{n}", yaxis=f"y{n}"
            )
            data.append(scatter(list(d_k), curves[variant][m], names[variant], mode="lines+markers", **style))
        axes[f"xaxis{n}"].update(type="log", title=dict(text="d_k"), **ticks)
    axes["shapes"] = [rule(col, x=user_dk, dash="dot", color=p.neutral) for col in (1, 2, 3)] + [
        rule(1, y=1.0 / n_keys, dash="dash", color=p.neutral),
        rule(2, y=float(np.log(n_keys)), dash="dash", color=p.neutral),
    ]
    return line_figure(data, axes, None, 370, legend=LEGEND_BELOW)


def rnn_figure(t_max: int, user_t: int, names: dict[str, str], d: int) -> go.Figure:
    """Sequential steps and path length, RNN vs attention, for T = 1..t_max; plus the work each does."""
    p = current()
    ts = np.unique(np.round(np.geomspace(1, t_max, 60)).astype(int))
    axes = subplot_row([_esc(names["steps_title"]), _esc(names["flops_title"])], 0.1)
    ticks = log_ticks(ts, axis_px(width=(1 - 0.1) / 2))
    data = []
    for col, y, which in (
        (1, ts, "rnn"),
        (1, np.ones_like(ts), "attn"),
        (2, 2.0 * ts * d * d, "rnn"),
        (2, 4.0 * ts * ts * d, "attn"),
    ):
        colour = p.line(3) if which == "rnn" else p.line(0)
        n = suffix(col)
        trace = scatter(
            ts, y, names[which], line=dict(color=colour, width=3), legendgroup=which, xaxis=f"x{n}", yaxis=f"y{n}"
        )
        data.append(trace if col == 1 else dict(trace, showlegend=False))  # one legend entry per series
    for n in ("", "2"):
        axes[f"xaxis{n}"].update(type="log", title=dict(text="T"), **ticks)
        axes[f"yaxis{n}"].update(type="log")
    axes["shapes"] = [rule(col, x=user_t, dash="dot", color=p.neutral) for col in (1, 2)]
    return line_figure(data, axes, None, 370, legend=LEGEND_BELOW)


def pe_figure(pe: np.ndarray, title: str, x_title: str, y_title: str) -> go.Figure:
    """The sinusoid table as one dense heatmap (no cell gaps: the stripes are the point)."""
    p = current()
    n_pos, d = pe.shape
    table = dict(
        type="heatmap",
        z=pe,
        x=list(range(d)),
        y=list(range(n_pos)),
        colorscale=p.signed,
        zmin=-1,
        zmax=1,
        zmid=0,
        hovertemplate=f"{_esc(y_title)} %{{y}}, {_esc(x_title)} %{{x}}: %{{z:.4f}}<extra></extra>",
    )
    axes = dict(
        xaxis=dict(title=dict(text=_esc(x_title)), showgrid=False),
        yaxis=dict(title=dict(text=_esc(y_title)), autorange="reversed", showgrid=False),
    )
    return line_figure([table], axes, title, int(min(560, max(260, 120 + 4 * n_pos))))
