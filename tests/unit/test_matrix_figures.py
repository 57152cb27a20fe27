"""Heatmaps at the largest sizes: which cells carry "−∞" and gaps, and the spec sent so Plotly draws a chart once."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.figures import matrices_figure, matrix_figure, screen
from attnlab.figures.celltext import MIN_TEXT_PX
from attnlab.figures.grid import GAP_MIN_CELL_PX
from attnlab.figures.matrix import BLOCKED_LABEL_ACROSS, GAP_ACROSS, GAP_SIDE
from attnlab.figures.prebuilt import NO_TEMPLATE, Prebuilt, new_figure
from attnlab.figures.projector import columns_across


def causal(t: int, seed: int = 0) -> np.ndarray:
    """A (t, t) score matrix with -inf above the diagonal, as the mask stage has it."""
    m = np.random.default_rng(seed).standard_normal((t, t))
    m[np.triu_indices(t, 1)] = -np.inf
    return m


def figure(t: int, heads: int) -> dict:
    """The mask stage's figure for `heads` causal (t, t) heads (one: a matrix; more: a grid, four to a row)."""
    tokens = [f"w{i}" for i in range(t)]
    mats = [causal(t, seed) for seed in range(heads)]
    return matrices_figure(mats, [f"Head {h + 1}" for h in range(heads)], tokens, tokens).to_dict()


def blocked_layers(spec: dict) -> list[dict]:
    return [trace for trace in spec["data"] if trace.get("name") == "blocked"]


@pytest.mark.parametrize(
    ("t", "heads", "labelled"),
    [(6, 2, True), (24, 1, True), (48, 1, False), (49, 1, False), (64, 1, False), (8, 4, True), (12, 4, False)],
)
def test_blocked_cells_say_minus_infinity_up_to_a_stated_width(t, heads, labelled):
    """Up to BLOCKED_LABEL_ACROSS columns across the chart, and where it fits its cell at MIN_TEXT_PX or more, each
    blocked cell says −∞, and no other cell; elsewhere the same cells are grey and their hover still says −∞, but no
    label is laid out (48 columns on a desktop, or four heads of 12: cells too narrow for −∞ at 7 px)."""
    spec = figure(t, heads)
    assert columns_across(spec) <= BLOCKED_LABEL_ACROSS or not labelled
    layers = blocked_layers(spec)
    assert len(layers) == heads
    for layer in layers:
        assert "−∞" in layer["hovertemplate"]
        if labelled:
            text = np.array(layer["text"])
            assert layer["texttemplate"] == "%{text}" and layer["textfont"]["size"] >= MIN_TEXT_PX
            assert (text == "−∞").sum() == t * (t - 1) // 2 and ((text == "−∞") == np.triu(np.ones((t, t)), 1)).all()
        else:
            assert "text" not in layer and "texttemplate" not in layer


@pytest.mark.parametrize(("t", "heads"), [(64, 1), (65, 1), (12, 4), (32, 4), (64, 4)])
def test_cells_touch_past_a_stated_width(t, heads):
    """Cells are drawn apart while every side is at most GAP_SIDE and the chart at most GAP_ACROSS columns across
    (the panels of its first row: `figures.grid` puts fewer side by side where cells would be too narrow), and in a
    grid while a cell is at least GAP_MIN_CELL_PX wide at the chart's width (two 64-token heads a row at 800: 5 px)."""
    spec = figure(t, heads)
    layout = spec["layout"]
    plot_px = screen.width() - layout["margin"]["l"] - layout["margin"]["r"]
    cell_px = plot_px * (layout["xaxis"].get("domain", [0, 1])[1] - layout["xaxis"].get("domain", [0, 1])[0]) / t
    wide = heads == 1 or cell_px >= GAP_MIN_CELL_PX
    gap = int(t <= GAP_SIDE and columns_across(spec) <= GAP_ACROSS and wide)
    assert {(trace["xgap"], trace["ygap"]) for trace in spec["data"]} == {(gap, gap)}


def test_the_large_sizes_keep_every_number():
    """Labels and gaps aside, the figure of four causal 64 x 64 heads holds what the per-head figures hold."""
    grid = figure(64, 4)
    tokens = [f"w{i}" for i in range(64)]
    alone = [matrix_figure(causal(64, seed), tokens, tokens).to_dict() for seed in range(4)]
    for panel, (values, layer) in enumerate(zip(grid["data"][0::2], grid["data"][1::2], strict=True)):
        one_values, one_layer = alone[panel]["data"]
        assert values["z"] == one_values["z"] and layer["z"] == one_layer["z"]
        assert values["x"] == one_values["x"] and values["y"] == one_values["y"]


def test_the_spec_sent_to_the_browser_draws_the_same_without_a_template():
    """mounted_once: no template, its axis defaults written into every axis a trace uses (the figure's own keys win),
    a fixed datarevision, the same data; the figure it came from is left as it was."""
    fig = matrices_figure([causal(5, 0), causal(5, 1)], ["a", "b"], list("abcde"), list("abcde"))
    before = fig.to_dict()
    layout_before = dict(before["layout"])
    sent = fig.mounted_once().to_dict()
    assert fig.to_dict()["layout"] == layout_before and before["layout"]["template"] is NO_TEMPLATE
    assert "template" not in sent["layout"] and sent["layout"]["datarevision"] == 1
    assert sent["data"] is before["data"]
    axes = {name for name in sent["layout"] if name[1:5] == "axis"}
    assert axes == {"xaxis", "yaxis", "xaxis2", "yaxis2"}
    for name in axes:
        own = before["layout"][name]
        assert sent["layout"][name] == {**NO_TEMPLATE["layout"][name[0] + "axis"], **own}
    rest = {k: v for k, v in before["layout"].items() if k != "template" and k not in axes}
    assert {k: v for k, v in sent["layout"].items() if k not in axes and k != "datarevision"} == rest


def test_an_axis_only_traces_name_gets_the_template_defaults_too():
    """A trace on the default axes of a layout that never names them still gets automargin and no ticks."""
    fig = Prebuilt(dict(data=[dict(type="heatmap", z=[[1.0]])], layout=dict(template=NO_TEMPLATE, height=200)))
    sent = fig.mounted_once().to_dict()["layout"]
    assert sent["xaxis"] == NO_TEMPLATE["layout"]["xaxis"] and sent["yaxis"] == NO_TEMPLATE["layout"]["yaxis"]


def test_a_figure_with_another_template_is_sent_as_it_is():
    """Only the spelled-out "none" template is known to be what plotly.js draws without one."""
    fig = Prebuilt(new_figure().to_dict())
    assert fig.mounted_once() is fig


def _chart_ids_script() -> None:
    """A chart under one key whose matrix size comes from session state (AppTest runs this as the app)."""
    import numpy as np
    import streamlit as st

    from attnlab.figures import matrix_figure

    n = st.session_state.get("n", 2)
    labels = [str(i) for i in range(n)]
    st.plotly_chart(matrix_figure(np.eye(n), labels, labels).mounted_once(), key="k", theme=None)


def test_streamlit_gives_a_chart_whose_spec_changed_a_new_element():
    """The fixed datarevision is safe because Streamlit mounts a new chart element when a keyed chart's spec changes
    (its id hashes the spec): a mounted chart's arrays never change under Plotly.react."""
    from streamlit.testing.v1 import AppTest

    from attnlab.testing import _components

    at = AppTest.from_function(_chart_ids_script)
    at._bidi_component_manager = _components()  # the installed components, scanned once per process
    at.run()
    first = at.get("plotly_chart")[0].proto.id
    assert at.run().get("plotly_chart")[0].proto.id == first  # the same spec: the same element, left mounted
    at.session_state["n"] = 3
    assert at.run().get("plotly_chart")[0].proto.id != first
