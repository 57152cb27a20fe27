"""The line charts' plain-dict builders write what Plotly's own helpers would (they replaced them for speed)."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from attnlab.figures.lines import rule, subplot_row


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
