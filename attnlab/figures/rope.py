"""Plotly figures of the RoPE lesson (no Streamlit): one pair turning, every pair's frequency, the decay with distance.

Built as plain dicts and validated once (`lines.line_figure`), like the other lessons' charts. Titles arrive
translated and are escaped here; colours come from the current palette.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.lines import LEGEND_BELOW, line_figure, rule, scatter, subplot_row, suffix
from attnlab.figures.palette import current
from attnlab.figures.text import esc

CIRCLE_POINTS = 97  # points of the circle the pair stays on (a rotation keeps its length)


def pair_plane(trail: np.ndarray, positions: np.ndarray, names: dict[str, str], title: str) -> go.Figure:
    """Pair i of q at the last positions up to the current one: the trail, the arrow now, and where it started.

    `names`: "trail", "now", "start" (legend entries), "position" (the hover's word), "x" and "y" (the two
    dimensions' names).
    """
    p = current()
    radius = float(np.hypot(*trail[-1]))
    ring = np.linspace(0.0, 2.0 * np.pi, CIRCLE_POINTS)
    start, now = trail[0], trail[-1]
    hover = f"{esc(names['position'])} %{{customdata}}<extra></extra>"
    data = [
        dict(
            type="scatter",
            x=radius * np.cos(ring),
            y=radius * np.sin(ring),
            mode="lines",
            line=dict(color=p.neutral, dash="dot", width=1),
            hoverinfo="skip",
            showlegend=False,
        ),
        scatter(
            trail[:, 0],
            trail[:, 1],
            names["trail"],
            mode="markers",
            marker=dict(color=p.line(0), size=6),
            customdata=positions,
            hovertemplate=hover,
        ),
        scatter(
            [0, start[0]],
            [0, start[1]],
            names["start"],
            mode="lines+markers",
            line=dict(color=p.neutral, dash="dash", width=2),
            marker=dict(size=[0, 8], color=p.neutral),
        ),
        scatter(
            [0, now[0]],
            [0, now[1]],
            names["now"],
            mode="lines+markers",
            line=dict(color=p.line(1), width=4),
            marker=dict(size=[0, 12], color=p.line(1)),
        ),
    ]
    bound = max(radius, 1e-9) * 1.3
    plane = dict(range=[-bound, bound], zeroline=True, showgrid=True, gridcolor=p.grid)
    axes = dict(
        xaxis=dict(plane, title=dict(text=esc(names["x"]))),
        yaxis=dict(plane, scaleanchor="x", title=dict(text=esc(names["y"]))),
    )
    return line_figure(data, axes, title, 440, legend=LEGEND_BELOW)  # a legend above met the title on a phone


def frequency_figure(theta: np.ndarray, wavelength: np.ndarray, pair: int, names: dict[str, str]) -> go.Figure:
    """theta_i = base**(-2i/d) and the wavelength 2*pi/theta_i against the pair i, both on log axes; the shown pair
    marked. `names`: "theta", "wavelength" (subplot titles and series), "pair" (the x axis)."""
    p = current()
    pairs = np.arange(len(theta))
    axes = subplot_row([esc(names["theta"]), esc(names["wavelength"])], 0.1)
    data = []
    for col, values, key in ((1, theta, "theta"), (2, wavelength, "wavelength")):
        n = suffix(col)
        data.append(
            scatter(
                pairs,
                values,
                names[key],
                mode="lines+markers",
                line=dict(color=p.line(col - 1), width=2),
                marker=dict(size=5),
                xaxis=f"x{n}",
                yaxis=f"y{n}",
                hovertemplate="i = %{x}: %{y:.6g}<extra></extra>",
            )
        )
        axes[f"xaxis{n}"].update(title=dict(text=esc(names["pair"])))
        axes[f"yaxis{n}"].update(type="log", exponentformat="power")
    axes["shapes"] = [rule(col, x=pair, dash="dot", color=p.neutral) for col in (1, 2)]
    return line_figure(data, axes, None, 360, legend=LEGEND_BELOW, showlegend=False)


def decay_figure(distances: np.ndarray, curves: dict[str, np.ndarray], names: dict[str, str], title: str) -> go.Figure:
    """Each curve (already divided by its value at distance 0) against the relative distance; a rule at 0.

    `curves` and `names` share their keys (the series); `names` also holds "x" and "y" (the axes' titles).
    """
    p = current()
    data = [
        scatter(distances, values, names[key], mode="lines", line=dict(color=p.line(i), width=2))
        for i, (key, values) in enumerate(curves.items())
    ]
    axes = dict(
        xaxis=dict(title=dict(text=esc(names["x"])), rangemode="tozero"),
        yaxis=dict(title=dict(text=esc(names["y"]))),
        shapes=[rule(y=0.0, dash="dot", color=p.neutral)],
    )
    return line_figure(data, axes, title, 380)
