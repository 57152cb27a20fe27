"""Margins sized from a heatmap's labels: upper bounds that grow with what they must hold (Chromium checks them
against Plotly's own measure in tests/e2e/test_playground.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attnlab.figures import matrix_figure
from attnlab.figures.margins import PAD, colorbar_labels, em_width, heatmap_margin
from attnlab.figures.prebuilt import BASE_LAYOUT

BASE = BASE_LAYOUT["margin"]
LABELS = st.lists(st.text(min_size=0, max_size=16), min_size=1, max_size=8)


def test_a_label_is_measured_as_shown_escapes_read_back_and_zero_width_spaces_none():
    assert em_width("&lt;b&gt;") == em_width("<b>")
    assert em_width("w\u200b\u200b") == em_width("w")
    assert em_width("注意") == 2.0  # a CJK character takes a full em in every font
    assert em_width("ab") < em_width("AB") <= em_width("MW") == 2.0


def test_colour_bar_labels_carry_the_decimals_of_the_finest_step():
    assert colorbar_labels(0.0, 1.0) == ["0.0", "1.0"]
    assert colorbar_labels(-2.5, 2.5) == ["−2.5", "2.5"]
    assert colorbar_labels(0.0, 0.004) == ["0.0000", "0.0040"]
    assert colorbar_labels(3.0, 3.0) == ["3"]  # a flat range: one label


@given(LABELS, LABELS, st.text(max_size=8), st.booleans())
def test_margins_never_shrink_as_labels_grow_and_never_fall_under_the_base(rows, cols, more, slanted):
    small = heatmap_margin(BASE, 13, rows, cols, slanted=slanted, colorbar=(0.0, 1.0))
    large = heatmap_margin(
        BASE, 13, [r + more for r in rows], [c + more for c in cols], slanted=slanted, colorbar=(-10.0, 10.0)
    )
    for side in "lrb":
        assert BASE[side] <= small[side] <= large[side]
    assert small["t"] == BASE["t"]
    assert small["l"] >= PAD + em_width(max(rows, key=em_width)) * 13


def test_a_matrix_chart_makes_room_for_its_labels_and_its_colour_bar():
    wide = matrix_figure(np.ones((3, 12)), ["注意力机制"] * 3, [f"col{i}" for i in range(12)]).to_dict()
    narrow = matrix_figure(np.ones((3, 3)), ["a"] * 3, ["b"] * 3).to_dict()
    assert wide["layout"]["margin"]["l"] > narrow["layout"]["margin"]["l"] > BASE["l"]
    assert wide["layout"]["margin"]["b"] > narrow["layout"]["margin"]["b"]  # 12 columns: slanted labels
    assert narrow["layout"]["margin"]["r"] > BASE["r"]  # the colour bar's room
    no_scale = matrix_figure(np.ones((3, 3)), ["a"] * 3, ["b"] * 3, showscale=False).to_dict()
    assert no_scale["layout"]["margin"]["r"] == BASE["r"]
