"""Read the numbers a page sent to the browser back out of AppTest's Plotly charts."""

from __future__ import annotations

import base64
import json

import numpy as np
from streamlit.testing.v1 import AppTest


def _decode(z) -> np.ndarray:
    """Plotly's JSON for an array: a nested list or {"dtype", "bdata", "shape"}."""
    if isinstance(z, dict) and "bdata" in z:
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = z.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr.astype(float)
    return np.array(z, dtype=float)


def figures(at: AppTest) -> list[dict]:
    """Every Plotly figure on the page, as the JSON spec Streamlit sends."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def heatmap_values(at: AppTest, index: int) -> list[np.ndarray]:
    """The z matrices (NaN where blocked) of the value heatmaps in one chart, panel by panel."""
    fig = figures(at)[index]
    return [_decode(tr["z"]) for tr in fig["data"] if tr.get("type") == "heatmap" and tr.get("name") != "blocked"]


def blocked_cells(at: AppTest, index: int) -> list[np.ndarray]:
    """Boolean masks of the cells drawn as −∞ in one chart."""
    fig = figures(at)[index]
    return [~np.isnan(_decode(tr["z"])) for tr in fig["data"] if tr.get("name") == "blocked"]
