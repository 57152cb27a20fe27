"""The numbers written in heatmap cells, checked against Plotly's own fitting in Chromium: `celltext.cell_font_px`
predicts the font Plotly writes them at, so a chart keeps its numbers only where they are legible (issue 61).

Each figure is built for a width band, its values' text forced on, and drawn by the plotly.js that plotly.py ships
(a reference this project does not control) in a blank tab at exactly the band's width; the font sizes Plotly gave
the cell text are read back from the SVG.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.figures import screen
from attnlab.figures.celltext import MIN_TEXT_PX, cell_font_px
from attnlab.figures.grid import matrices_figure
from attnlab.figures.matrix import matrix_figure

pytestmark = pytest.mark.e2e  # the browser group: one browser for every browser test

DRAW = """async ([data, layout]) => {
  const div = document.createElement('div');
  document.body.replaceChildren(div);
  await Plotly.newPlot(div, data, layout, { displayModeBar: false });
  return [...div.querySelectorAll('g.heatmap-label text')].map(t => parseFloat(t.style.fontSize));
}"""


def drawn_sizes(tab, fig, px: int) -> set[float]:
    """The font sizes of every cell's text, the values' text forced on, drawn `px` wide."""
    spec = fig.to_dict()
    data = [dict(spec["data"][0], texttemplate="%{z:.2f}"), *spec["data"][1:]]
    return set(tab.evaluate(DRAW, [data, {**spec["layout"], "width": px}]))


def predicted(fig, m: np.ndarray, px: int, panels: int = 1, gap_x: float = 0.0) -> int:
    """`cell_font_px` for one panel of the figure's plot area at `px` wide (`panels` side by side, `gap_x` apart)."""
    spec = fig.to_dict()
    layout = spec["layout"]
    margin = layout["margin"]
    plot_w = (px - margin["l"] - margin["r"]) * (1 - gap_x * (panels - 1)) / panels
    y = layout.get("yaxis", {}).get("domain", [0, 1])
    plot_h = (layout["height"] - margin["t"] - margin["b"]) * (y[1] - y[0])
    return cell_font_px(m, plot_w, plot_h, spec["data"][0]["xgap"])


@pytest.mark.parametrize("px", [300, 340, 480, 800])
@pytest.mark.parametrize(("rows", "cols", "scale"), [(6, 8, 1.0), (6, 8, 40.0), (3, 4, 0.01), (12, 12, 5.0)])
def test_plotly_writes_a_matrixs_numbers_at_the_predicted_size(plotly_tab, px, rows, cols, scale):
    m = np.random.default_rng(rows * cols).normal(size=(rows, cols)) * scale
    with screen.at(px):
        fig = matrix_figure(m, [f"t{i}" for i in range(rows)], [f"d{j}" for j in range(cols)])
    size = predicted(fig, m, px)
    assert drawn_sizes(plotly_tab, fig, px) == ({size} if size > 0 else set())  # Plotly writes none under 1 px
    assert (fig.to_dict()["data"][0]["texttemplate"] is not None) == (size >= MIN_TEXT_PX)


@pytest.mark.parametrize("px", [340, 480, 800])
def test_two_heads_side_by_side_keep_their_numbers_only_where_they_are_legible(plotly_tab, px):
    """The Playground's per-head stages: on a phone two heads of six tokens share a row and their cells are too
    narrow for numbers Plotly would write at 5 px; a tablet's (7 px) and a desktop's keep them."""
    tokens = "the cat sat on the mat".split()
    mats = [np.random.default_rng(h).normal(size=(6, 6)) * 4 for h in range(2)]
    with screen.at(px):
        fig = matrices_figure(mats, ["Head 1", "Head 2"], tokens, tokens)
    layout = fig.to_dict()["layout"]
    assert layout["xaxis2"]["domain"][0] > 0  # side by side, as the Playground draws them
    gap_x = layout["xaxis2"]["domain"][0] - layout["xaxis"]["domain"][1]
    sizes = [predicted(fig, m, px, panels=2, gap_x=gap_x) for m in mats]
    size = min(sizes)
    written = [trace for trace in fig.to_dict()["data"] if trace.get("texttemplate")]
    assert len(written) == (2 if size >= MIN_TEXT_PX else 0)
    assert drawn_sizes(plotly_tab, fig, px) == set(sizes if written else sizes[:1])  # the first forced on
    assert (size >= MIN_TEXT_PX) == (px >= 480)


def test_a_column_per_head_drops_numbers_plotly_would_write_over_each_other(plotly_tab):
    """64 tokens' one-column panels (64 heads of d_k = 1 on the Multi-head page): Plotly fits no text to a matrix one
    column wide and writes it at the chart's 13 px into rows 8 px tall; those numbers are left out."""
    tokens = [f"w{i}" for i in range(64)]
    mats = [np.random.default_rng(h).normal(size=(64, 1)) for h in range(4)]
    with screen.at(800):
        fig = matrices_figure(mats, [f"Head {h + 1}" for h in range(4)], tokens, ["d0"])
    layout = fig.to_dict()["layout"]
    row_px = (layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]) / 64
    assert drawn_sizes(plotly_tab, fig, 800) == {13.0} and row_px < 13
    assert not any(trace.get("texttemplate") for trace in fig.to_dict()["data"])


BLOCKED = """async ([data, layout]) => {
  const div = document.createElement('div');
  document.body.replaceChildren(div);
  await Plotly.newPlot(div, data, layout, { displayModeBar: false });
  return [...div.querySelectorAll('g.heatmap-label text')].filter(t => t.textContent === '−∞').map(t => {
    const r = t.getBoundingClientRect();
    return { left: r.left, right: r.right, top: Math.round(r.top), size: parseFloat(t.style.fontSize) };
  });
}"""


@pytest.mark.parametrize("px", [300, 340, 480, 800])
@pytest.mark.parametrize(("heads", "n"), [(1, 6), (2, 6), (4, 6), (1, 12), (2, 12)])
def test_blocked_cells_say_minus_infinity_inside_their_cells(plotly_tab, px, heads, n):
    """Causal scores (each head's upper triangle blocked): every "−∞" Plotly writes stays clear of its neighbours in
    the row, at the size `blocked_font_px` gave it; where that is under `MIN_TEXT_PX` none is written."""
    tokens = [f"t{i}" for i in range(n)]
    causal = np.where(np.tril(np.ones((n, n))) > 0, 0.5, -np.inf)
    with screen.at(px):
        fig = matrices_figure([causal] * heads, [f"Head {h + 1}" for h in range(heads)], tokens, tokens)
    spec = fig.to_dict()
    layers = [trace for trace in spec["data"] if trace.get("name") == "blocked"]
    boxes = plotly_tab.evaluate(BLOCKED, [spec["data"], {**spec["layout"], "width": px}])
    if "texttemplate" not in layers[0]:
        assert boxes == []
        return
    size = layers[0]["textfont"]["size"]
    assert size >= MIN_TEXT_PX and {box["size"] for box in boxes} == {size}
    assert len(boxes) == heads * n * (n - 1) // 2
    rows: dict[int, list[dict]] = {}
    for box in boxes:
        rows.setdefault(box["top"], []).append(box)
    for row in rows.values():
        row.sort(key=lambda box: box["left"])
        assert all(b["left"] - a["right"] >= 1 for a, b in zip(row, row[1:], strict=False)), row
