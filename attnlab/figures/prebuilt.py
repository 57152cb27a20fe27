"""Figures handed to Streamlit as the JSON they become: one template, typed arrays, no per-property validation.

Plotly validates a figure property by property and Streamlit deep-copies it; for a page of heatmaps that
costs more than the rest of a rerun, so the builders write plain specs that are valid by construction.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import plotly.graph_objects as go
from _plotly_utils.utils import to_typed_array_spec
from plotly.basedatatypes import BaseFigure

NO_TEMPLATE = go.Layout(template="none").to_plotly_json()["template"]  # Plotly's "none", spelled out
# A prebuilt figure is drawn as it is (no Streamlit theme pass in the browser, which costs more than the drawing):
# its axes make room for their own labels, as the theme would have had them do.
NO_TEMPLATE["layout"] = dict(xaxis=dict(automargin=True, ticks=""), yaxis=dict(automargin=True, ticks=""))
BASE_LAYOUT = dict(
    template=NO_TEMPLATE,
    font=dict(family="Noto Sans, Noto Sans CJK SC, sans-serif", size=13),
    margin=dict(l=10, r=10, t=36, b=10),
    paper_bgcolor="rgba(0,0,0,0)",
    plot_bgcolor="rgba(0,0,0,0)",
)
# attnlab's look for the figures Plotly builds (line charts, bars): applied to each figure, never set as Plotly's
# default, so importing attnlab changes no chart of anyone else's (a notebook's own figures keep their template).
TEMPLATE = go.layout.Template(layout={k: v for k, v in BASE_LAYOUT.items() if k != "template"})


def new_figure(*traces: Any) -> go.Figure:
    """A Plotly figure that starts from attnlab's template (also sparing the deep copy of Plotly's default one)."""
    return go.Figure(list(traces) or None, layout=dict(template=TEMPLATE))


class Prebuilt(BaseFigure):
    """A figure handed over as the JSON it becomes: Streamlit and plotly.io read `to_dict()` as it is.

    Plotly builds a figure property by property, validating each, and Streamlit then deep-copies it;
    for a page of heatmaps that costs more than the rest of a rerun. The specs built here are valid by
    construction (colour scales expanded, arrays typed, the template resolved), so none of that runs:
    the object is a BaseFigure only so Streamlit and plotly.io take it as one. Read it through
    `to_dict()` (read-only), or `figure()` for a full Plotly figure.
    """

    def __init__(self, spec: dict[str, Any]) -> None:  # no BaseFigure state is built, on purpose
        self._spec = spec

    def to_dict(self) -> dict[str, Any]:
        """The figure's JSON structure (not a copy: treat it as read-only)."""
        return self._spec

    def to_plotly_json(self) -> dict[str, Any]:
        """The same structure, for plotly.io."""
        return self._spec

    def figure(self) -> go.Figure:
        """A full, validated Plotly figure of the same spec (slow: for exports and inspection)."""
        return go.Figure(self._spec)

    def __repr__(self) -> str:
        return f"Prebuilt({len(self._spec.get('data', []))} traces)"

    def mounted_once(self) -> Prebuilt:
        """The figure as the app sends it, so that Plotly paints its cells once in the browser, not two or three times.

        Streamlit's chart element hands a figure to `Plotly.react` again after mounting it: its theme pass copies
        the figure through JSON, then the width it measured is set. Plotly repaints every cell of every panel when
        the layout's template is a new object (a template is compared by identity) or, without a `datarevision`,
        when any data array is. So the template's axis defaults are written into every axis (the template
        goes; what Plotly draws is the same), and `datarevision` is fixed: a chart whose spec changes gets a new
        element id from Streamlit (the id hashes the spec), so a mounted chart's arrays never change. The width
        step itself still lays the chart out twice (Streamlit 1.67 first draws it hidden at no width, then at the
        width it measured; two `plotly_afterplot`s), but the second keeps the painted cells: on the Multi-head page
        at 64 heads the nine heatmaps of its three later charts were painted once each (the paints are counted by
        `scripts/draw_profile.py`).
        """
        layout = self._spec["layout"]
        if layout.get("template") is not NO_TEMPLATE:
            return self
        axes = {_axis_key(trace, letter) for trace in self._spec["data"] for letter in "xy"}
        axes |= {name for name in layout if _AXIS.fullmatch(name)}
        out = {name: value for name, value in layout.items() if name != "template"}
        for name in axes:
            out[name] = {**NO_TEMPLATE["layout"][name[0] + "axis"], **layout.get(name, {})}
        return Prebuilt({**self._spec, "layout": {**out, "datarevision": 1}})


_AXIS = re.compile(r"[xy]axis\d*")


def _axis_key(trace: dict, letter: str) -> str:
    """The layout key of the axis a trace is drawn on: "x2" -> "xaxis2"."""
    return f"{letter}axis{trace.get(letter + 'axis', letter)[1:]}"


@functools.cache
def expanded_scale(scale: str | tuple) -> tuple:
    """A colour scale as [[stop, colour], ...], the form Plotly writes (named scales such as RdBu_r resolved)."""
    named = scale if isinstance(scale, str) else [list(stop) for stop in scale]
    return tuple(tuple(stop) for stop in go.Heatmap(colorscale=named).colorscale)


def colorscale(scale: str | list) -> list[list]:
    """A palette scale ready for a prebuilt figure."""
    key = scale if isinstance(scale, str) else tuple(tuple(stop) for stop in scale)
    return [list(stop) for stop in expanded_scale(key)]


def typed(a: np.ndarray) -> dict[str, str]:
    """A numeric array as Plotly's typed-array JSON (base64), which is what a validated figure sends."""
    return to_typed_array_spec(np.ascontiguousarray(a))
