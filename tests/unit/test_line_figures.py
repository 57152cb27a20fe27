"""The line charts' plain-dict builders write what Plotly's own helpers would (they replaced them for speed), and
log axes' ticks stand apart."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plotly.subplots import make_subplots

from attnlab.figures import screen
from attnlab.figures.lines import (
    AUTORANGE_PAD,
    TICK_GAP_PX,
    axis_px,
    log_ticks,
    plain_number,
    rule,
    subplot_row,
)
from attnlab.figures.margins import em_width


@pytest.mark.parametrize(
    ("titles", "spacing"), [(["a"], 0.1), (["a", "b"], 0.1), (["a", "<b>", "c"], 0.08), (["w"] * 4, 0.05)]
)
def test_a_subplot_row_is_laid_out_as_make_subplots_lays_it_out(titles, spacing):
    ours = go.Figure(layout=dict(subplot_row(titles, spacing), template="none")).to_dict()["layout"]
    plotly = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=spacing)
    theirs = plotly.update_layout(template="none").to_dict()["layout"]
    assert ours == theirs


def test_a_rule_is_the_shape_add_vline_and_add_hline_write():
    plotly = make_subplots(rows=1, cols=2)
    for col in (1, 2):
        plotly.add_trace(go.Scatter(x=[1, 2], y=[1, 2]), row=1, col=col)  # a line goes only where a subplot has data
    plotly.add_vline(x=3, line_dash="dot", line_color="#555555", row=1, col=2)
    plotly.add_hline(y=0.5, line_dash="dash", line_color="#555555", row=1, col=1)
    ours = [rule(2, x=3, dash="dot", color="#555555"), rule(1, y=0.5, dash="dash", color="#555555")]
    assert go.Figure(layout=dict(shapes=ours)).to_dict()["layout"]["shapes"] == plotly.to_dict()["layout"]["shapes"]


LOG_RANGES = st.tuples(st.floats(-4, 9), st.floats(0.05, 8)).map(lambda r: (10.0 ** r[0], 10.0 ** (r[0] + r[1])))


@given(LOG_RANGES, st.floats(5, 2000))
def test_a_log_axis_labels_stand_apart_inside_the_values_range(ends, length_px):
    """Each pair of neighbouring ticks is as far apart on the axis as half of both labels' width bounds and a gap."""
    lo, hi = ends
    ticks = log_ticks([lo, hi], length_px)
    inside = [(m, e) for e in range(-5, 19) for m in (1, 2, 5) if lo / 1.001 <= m * 10.0**e <= hi * 1.001]
    if not ticks:  # Plotly's own: no 1, 2 or 5 of any decade in the range
        assert inside == []
        return
    vals, text = ticks["tickvals"], ticks["ticktext"]
    assert vals == sorted(set(vals)) and all(lo / 1.001 <= v <= hi * 1.001 for v in vals)
    assert text == [plain_number(v) for v in vals]
    if len(vals) == 1:  # no two fit: the first decade in the range alone, or the first 1, 2 or 5 where there is none
        decades = [10.0**e for m, e in inside if m == 1]
        assert vals[0] == (decades or [m * 10.0**e for m, e in inside])[0]
    per_decade = length_px / (math.log10(hi / lo) * AUTORANGE_PAD)
    for a, b, ta, tb in zip(vals, vals[1:], text, text[1:], strict=False):
        assert math.log10(b / a) * per_decade >= (em_width(ta) + em_width(tb)) * 13 / 2 + TICK_GAP_PX


@given(LOG_RANGES, st.floats(20, 2000), st.floats(1.01, 4))
def test_a_longer_log_axis_never_gets_fewer_labels(ends, length_px, longer):
    shorter, more = log_ticks(list(ends), length_px), log_ticks(list(ends), length_px * longer)
    assert len(shorter.get("tickvals", [])) <= len(more.get("tickvals", []))


def test_a_phones_third_of_a_chart_gets_decades_where_a_desktops_gets_one_two_five():
    """The Scaling page's three panels over d_k = 1..1024: every 2nd decade on a phone, 1-2-5 across a desktop."""
    d_k = [2**i for i in range(11)]
    with screen.at(340):
        phone = log_ticks(d_k, axis_px(width=0.28))
    with screen.at(800):
        desktop = log_ticks(d_k, axis_px())
    assert phone["ticktext"] == ["1", "100"]
    assert desktop["ticktext"] == ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"]
    assert [plain_number(x) for x in (0.001, 5000, 1e4, 2.5e6, 1e10)] == ["0.001", "5000", "10k", "2.5M", "10B"]
