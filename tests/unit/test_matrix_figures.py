"""Heatmaps at the largest sizes: which cells carry "−∞" and gaps, and the spec sent so Plotly draws a chart once."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from attnlab.figures import matrices_figure, matrix_figure, screen
from attnlab.figures.celltext import MIN_TEXT_PX, spacing
from attnlab.figures.grid import GAP_MIN_CELL_PX
from attnlab.figures.heads import STRIP_GAP_PX, STRIP_PX, with_head_strip
from attnlab.figures.margins import em_width
from attnlab.figures.matrix import (
    BLOCKED_LABEL_ACROSS,
    GAP_ACROSS,
    GAP_SIDE,
    LEVEL_GAP_PX,
)
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


@pytest.mark.parametrize(("n", "d_k", "rules"), [(8, 1, 0), (8, 2, 3), (8, 4, 1), (64, 1, 0), (64, 16, 3)])
def test_rules_stand_between_heads_unless_every_column_is_a_head(n, d_k, rules):
    """A rule before each head's first column (or above its first row), none where every column starts a head: rules
    round every cell say nothing the cells don't."""
    breaks = list(range(d_k, n, d_k))
    labels = [f"d{i}" for i in range(n)]
    m = np.random.default_rng(0).standard_normal((n, n))
    for axis in ("col_breaks", "row_breaks"):
        lines = matrix_figure(m, labels, labels, **{axis: breaks}).to_dict()["layout"]["shapes"]
        assert len(lines) == rules and all(s["type"] == "line" for s in lines)
        where = sorted(s["x0"] if axis == "col_breaks" else s["y0"] for s in lines)
        assert where == ([b - 0.5 for b in breaks] if rules else [])


@pytest.mark.parametrize(
    ("d_model", "n_heads", "band", "named"),
    [
        (4, 2, 800, True),
        (8, 8, 800, True),
        (64, 64, 800, False),
        (64, 4, 800, True),
        (6, 1, 800, True),
        (8, 2, 340, True),
        (8, 8, 340, False),
    ],
)
def test_the_heads_strip_stands_over_exactly_each_heads_columns(d_model, n_heads, band, named):
    """W_Q under its heads' strip: one chart whose strip shares the matrix's x axis (so each head's colour stands
    over its own d_k columns at any width), above the matrix, which keeps its own values and height in pixels. A
    head is named once, centred over its columns, only in a font of MIN_TEXT_PX or more that fits them."""
    with screen.at(band):
        dims = [f"d{i}" for i in range(d_model)]
        w = np.random.default_rng(1).standard_normal((d_model, d_model))
        d_k = d_model // n_heads
        alone = matrix_figure(w, dims, dims, col_breaks=list(range(d_k, d_model, d_k)))
        before = alone.to_dict()
        spec = with_head_strip(alone, n_heads, [f"Head {h + 1}" for h in range(n_heads)]).to_dict()
        values, strip = spec["data"][0], spec["data"][-1]
        assert values["z"] == before["data"][0]["z"] and spec["layout"]["shapes"] == before["layout"]["shapes"]
        assert strip["name"] == "heads" and strip["x"] == values["x"] and strip["yaxis"] == "y2"
        owners = np.frombuffer(base64.b64decode(strip["z"]["bdata"]), dtype=strip["z"]["dtype"])
        assert owners.tolist() == [c // d_k for c in range(d_model)]
        assert strip["text"] == [[f"Head {c // d_k + 1}" for c in range(d_model)]]  # the hover's
        plot_w = screen.width() - spec["layout"]["margin"]["l"] - spec["layout"]["margin"]["r"]
        room = d_k * spacing(plot_w, d_model)  # px across one head's columns
        names = spec["layout"].get("annotations", [])
        assert bool(names) == named and "texttemplate" not in strip
        if named:
            assert [a["text"] for a in names] == [f"Head {h + 1}" for h in range(n_heads)]
            assert [a["x"] for a in names] == [h * d_k + (d_k - 1) / 2 for h in range(n_heads)]  # each centred
            assert all(a["yref"] == "y2" and a["xref"] == "x" for a in names)
            assert names[0]["font"]["color"] == "#fff"  # on the first head's dark purple, as Plotly's own cell text
            size = {a["font"]["size"] for a in names}.pop()
            assert MIN_TEXT_PX <= size and size * em_width("Head 1") + LEVEL_GAP_PX <= room  # neighbours apart
        layout, old = spec["layout"], before["layout"]
        assert layout["height"] == old["height"] + STRIP_PX
        low, high = layout["yaxis"]["domain"], layout["yaxis2"]["domain"]
        assert low[0] == 0.0 and low[1] < high[0] < high[1] == 1.0
        plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
        assert low[1] * plot_px == pytest.approx(old["height"] - old["margin"]["t"] - old["margin"]["b"], rel=1e-9)
        assert (high[1] - high[0]) * plot_px == pytest.approx(STRIP_PX - STRIP_GAP_PX, rel=1e-9)
        assert before == alone.to_dict()  # the matrix's own figure is left as it was
        Prebuilt(spec).figure()  # and Plotly takes the spec as valid
