"""Column labels drawn by Plotly in Chromium: written level only where they fit their columns, slanted where they
would run together (on a 390-px phone, two heads of six tokens read "thecatsat on themat" level).

Each figure is built for a width band and drawn by the plotly.js that plotly.py ships, in a blank tab exactly the
band's width; the boxes of each panel's x tick labels are read back from the SVG.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.figures import screen
from attnlab.figures.grid import matrices_figure
from attnlab.figures.matrix import TICK_PX, matrix_figure

pytestmark = pytest.mark.e2e  # the browser group: one browser for every browser test

TICKS = """async ([data, layout]) => {
  const div = document.createElement('div');
  document.body.replaceChildren(div);
  await Plotly.newPlot(div, data, layout, { displayModeBar: false });
  return [...div.querySelectorAll('.subplot')].map(panel =>
    [...panel.querySelectorAll('.xaxislayer-above text')].map(t => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent, left: r.left, right: r.right, bottom: r.bottom };
    }));
}"""
MIN_GAP_PX = 2  # between two level labels as drawn, or they read as one word
TOKENS = {
    "short": "the cat sat on the mat".split(),
    "long": "attention mechanisms transform representations everywhere today".split(),
    "chinese": "我 喜欢 你 ， 你 也 喜欢 我".split(),
}


def label_step(column_px: float) -> int:
    """Plotly labels every this-many-th column of a category axis whose columns are `column_px` wide."""
    return math.ceil(max(1.0, TICK_PX / column_px))


def drawn_ticks(tab, spec: dict, px: int, level: bool = False) -> list[list[dict]]:
    """Each panel's x tick label boxes, the figure drawn `px` wide (`level`: its labels forced level)."""
    layout = {**spec["layout"], "width": px}
    if level:
        layout = {k: dict(v, tickangle=0) if k.startswith("xaxis") else v for k, v in layout.items()}
    return tab.evaluate(TICKS, [spec["data"], layout])


def crowded(boxes: list[dict]) -> list[str]:
    """Neighbouring labels less than `MIN_GAP_PX` apart, described."""
    ordered = sorted(boxes, key=lambda box: box["left"])
    return [
        f"{a['text']!r} and {b['text']!r}: {b['left'] - a['right']:.1f} px apart"
        for a, b in zip(ordered, ordered[1:], strict=False)
        if b["left"] - a["right"] < MIN_GAP_PX
    ]


@pytest.mark.parametrize("px", [300, 340, 480, 800])
@pytest.mark.parametrize("heads", [1, 2, 4])
@pytest.mark.parametrize("tokens", sorted(TOKENS))
def test_level_column_labels_never_run_together(plotly_tab, px, heads, tokens):
    """Plotly labels every `label_step`-th column, inside the chart; labels written level never run together. (They
    slant wherever `margins.widest`'s bound of the widest says one might not fit, which is more often than Chromium's
    own fonts need: the bound holds for every font a browser falls back to.)"""
    words = TOKENS[tokens]
    mats = [np.random.default_rng(h).normal(size=(len(words), len(words))) for h in range(heads)]
    with screen.at(px):
        spec = matrices_figure(mats, [f"Head {h + 1}" for h in range(heads)], words, words).to_dict()
    slanted = {spec["layout"][k]["tickangle"] for k in spec["layout"] if k.startswith("xaxis")}
    assert len(slanted) == 1  # every panel alike
    panels = drawn_ticks(plotly_tab, spec, px)
    layout = spec["layout"]
    panel_px = (px - layout["margin"]["l"] - layout["margin"]["r"]) * (np.diff(layout["xaxis"].get("domain", [0, 1])))
    step = label_step(float(panel_px[0]) / len(words))
    assert [len(boxes) for boxes in panels] == [-(-len(words) // step)] * heads
    assert all(box["bottom"] <= spec["layout"]["height"] for boxes in panels for box in boxes)  # within the chart
    if slanted == {0}:
        assert [crowded(boxes) for boxes in panels] == [[]] * heads


def test_two_phone_heads_of_six_tokens_slant_and_a_desktops_stay_level(plotly_tab):
    """The case that ran together: the Playground's per-head stages on a 390-px phone (the 340-px band). Drawn level
    there, Plotly writes them into one another; on a desktop they fit level and stay so."""
    words = TOKENS["short"]
    mats = [np.ones((6, 6))] * 2
    for px, angle in ((340, -45), (800, 0)):
        with screen.at(px):
            spec = matrices_figure(mats, ["Head 1", "Head 2"], words, words).to_dict()
        assert spec["layout"]["xaxis2"]["domain"][0] > 0 and (spec["layout"]["xaxis"]["tickangle"], px) == (angle, px)
        level = drawn_ticks(plotly_tab, spec, px, level=True)
        assert all(crowded(boxes) for boxes in level) == (px == 340)


def test_labels_stay_apart_where_plotly_draws_a_wider_plot_than_the_margins_bound(plotly_tab):
    """The Positions page's difference of two equal outputs (values near 1e-16) in half a desktop's page: the colour
    bar's labels take less room than their bound, so Plotly's columns came out wider than worked out, past the width
    where it labels every one, and level labels ran together 1.5 px apart. Drawn at every width the figure's band
    stands for, up to a 1280-px window's half (the band's figure is drawn at any of them)."""
    m = np.abs(np.random.default_rng(0).normal(size=(5, 8))) * 1e-16
    with screen.at(800), screen.share(0.5):
        least = screen.width()
        spec = matrix_figure(m, "the dog chased a cat".split(), [f"d{i}" for i in range(8)], kind="positive").to_dict()
    for px in range(least, 420, 4):
        (boxes,) = drawn_ticks(plotly_tab, spec, px)
        assert spec["layout"]["xaxis"]["tickangle"] != 0 or crowded(boxes) == [], px
