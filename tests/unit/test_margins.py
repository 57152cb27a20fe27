"""Margins sized from a heatmap's labels: upper bounds that grow with what they must hold, and Plotly left to measure
only the labels they cannot bound (Chromium checks the bounds in tests/e2e/test_label_widths.py and
tests/e2e/test_playground.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attnlab.figures import grid_figure, head_columns_figure, matrix_figure
from attnlab.figures.margins import PAD, bounded, colorbar_labels, em_width, heatmap_margin
from attnlab.figures.prebuilt import BASE_LAYOUT

BASE = BASE_LAYOUT["margin"]
LABELS = st.lists(st.text(min_size=0, max_size=16), min_size=1, max_size=8)


def test_a_label_is_measured_as_shown_escapes_read_back_and_zero_width_spaces_none():
    assert em_width("&lt;b&gt;") == em_width("<b>")
    assert em_width("w\u200b\u200b") == em_width("w")
    assert em_width("注意") == 2.0  # a CJK character takes a full em in every font
    assert em_width("ab") < em_width("AB") <= em_width("MW") == 2.0
    assert em_width("Ŵŵ") == em_width("Ww")  # an accented letter is as wide as its base letter
    assert em_width("“”") == 2.0  # curly quotes take a full em in Noto Sans CJK


def test_labels_are_bounded_only_when_every_character_was_measured():
    assert bounded(["I", "like", "you", "注意力", "naïve", "&lt;b&gt;", "x\u200b", "한국어", "カタカナ", "Œuvre…"])
    assert bounded([])
    for other in ("😀", "مرحبا", "Привет", "©", "ﷺ", "\u0301", "&#128512;"):
        assert not bounded(["fine", other]), other


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
    wide = matrix_figure(np.ones((3, 24)), ["注意力机制"] * 3, [f"column{i}" for i in range(24)]).to_dict()
    narrow = matrix_figure(np.ones((3, 3)), ["a"] * 3, ["b"] * 3).to_dict()
    assert wide["layout"]["margin"]["l"] > narrow["layout"]["margin"]["l"] > BASE["l"]
    assert wide["layout"]["xaxis"]["tickangle"] == -45 and narrow["layout"]["xaxis"]["tickangle"] == 0
    assert wide["layout"]["margin"]["b"] > narrow["layout"]["margin"]["b"]  # the slanted labels' room
    assert narrow["layout"]["margin"]["r"] > BASE["r"]  # the colour bar's room
    no_scale = matrix_figure(np.ones((3, 3)), ["a"] * 3, ["b"] * 3, showscale=False).to_dict()
    assert no_scale["layout"]["margin"]["r"] == BASE["r"]


def test_plotly_measures_a_heatmaps_labels_only_where_their_widths_are_not_bounded():
    """Automargin (Plotly measures every label in the browser) stays for labels with emoji or other scripts."""
    ones = np.ones((2, 2))
    plain = matrix_figure(ones, ["注意", "b"], ["x", "<y>"]).to_dict()["layout"]
    emoji = matrix_figure(ones, ["😀", "b"], ["x", "y"]).to_dict()["layout"]
    assert (plain["xaxis"]["automargin"], plain["yaxis"]["automargin"]) == (False, False)
    assert (emoji["xaxis"]["automargin"], emoji["yaxis"]["automargin"]) == (True, True)
    grid = grid_figure([ones, ones], ["h1", "h2"], ["a", "b"], ["x", "Привет"]).to_dict()["layout"]
    assert {grid[f"{axis}{n}"]["automargin"] for axis in ("xaxis", "yaxis") for n in ("", "2")} == {True}


def test_colour_bars_and_the_heads_strip_leave_their_labels_where_they_are_placed():
    """Plotly's default for a colour bar or a numeric axis ("hide past div") measures every label again as each
    one is placed; the margins already hold them."""
    trace = matrix_figure(np.ones((2, 2)), ["a", "b"], ["x", "y"]).to_dict()["data"][0]
    assert trace["colorbar"]["ticklabeloverflow"] == "allow"
    assert head_columns_figure(8, 2, ["h1", "h2"]).layout.xaxis.ticklabeloverflow == "allow"
