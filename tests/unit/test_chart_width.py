"""Figures laid out for the width their charts have (issue 54): grids of heads wrap, titles wrap or shorten."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.figures import grid_figure, screen
from attnlab.figures.grid import ASPECT, per_row
from attnlab.figures.lines import line_figure, scatter
from attnlab.figures.margins import em_width
from attnlab.figures.projector import columns_across, projector

TOKENS = ["<BOS>", "我", "喜", "欢", "你", "，", "你", "也", "喜", "欢", "我", "<EOS>"]


def heads(n: int, t: int) -> dict:
    rng = np.random.default_rng(0)
    mats = [rng.normal(size=(t, t)) for _ in range(n)]
    return grid_figure(mats, [f"Head {h + 1}" for h in range(n)], TOKENS[:t], TOKENS[:t]).to_dict()


def cell_aspect(spec: dict, width_px: int) -> float:
    """A cell's width over its height, as the browser draws the first panel in a chart `width_px` wide."""
    layout = spec["layout"]
    plot_w = width_px - layout["margin"]["l"] - layout["margin"]["r"]
    plot_h = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    (x0, x1), (y0, y1) = layout["xaxis"]["domain"], layout["yaxis"]["domain"]
    n_cols, n_rows = len(spec["data"][0]["x"]), len(spec["data"][0]["y"])
    return (x1 - x0) * plot_w / n_cols / ((y1 - y0) * plot_h / n_rows)


def test_the_browser_width_falls_in_the_narrowest_band_it_covers():
    assert [screen.band(px) for px in (250, 328, 358, 736, 820, 940)] == [300, 300, 340, 640, 800, 800]


def test_a_desktop_keeps_four_heads_of_twelve_tokens_side_by_side_and_a_phone_stacks_them():
    """The issue's phone link: four heads of 12 x 12 scores were 4-px-wide cells 24 px tall, side by side."""
    desktop = heads(4, 12)
    assert columns_across(desktop) == 48 and cell_aspect(desktop, 820) >= ASPECT
    with screen.at(358):
        phone = heads(4, 12)
    assert columns_across(phone) == 12  # one per row: two would leave cells narrower than half their height
    assert cell_aspect(phone, 358) >= ASPECT
    assert phone["layout"]["height"] > 3 * desktop["layout"]["height"]
    assert [a["text"] for a in phone["layout"]["annotations"]] == [f"Head {h}" for h in range(1, 5)]


@pytest.mark.parametrize(("n", "t"), [(2, 5), (4, 5), (3, 12), (4, 64), (8, 45)])
@pytest.mark.parametrize("px", [328, 358, 736, 820])
def test_no_grid_cell_is_narrower_than_about_half_its_height(n, t, px):
    with screen.at(px):
        spec = grid_figure([np.zeros((t, t))] * n, [""] * n, [f"w{i}" for i in range(t)], [f"w{i}" for i in range(t)])
    assert cell_aspect(spec.to_dict(), screen.band(px)) >= ASPECT - 0.01


def test_rows_of_panels_are_as_even_as_the_fewest_rows_allow():
    assert per_row(4, 4, 220, 30) == 2  # three fit, but four panels go two and two
    assert per_row(5, 4, 400, 24) == 3 and per_row(1, 64, 100, 24) == 1


@pytest.mark.parametrize(
    ("title", "px"),
    [
        ("Variance of q·k over 4000 random pairs per d_k (bars: ±2 standard errors)", 320),
        ("每个 d_k 用 4000 对随机向量测得的 q·k 方差（误差线：±2 个标准误）", 320),
        ("Cache size against context: Llama-3-8B's layers, heads and width", 200),
        ("k rotated, K/V head 1", 60),
    ],
)
def test_a_title_is_wrapped_to_its_width_and_cut_only_past_its_lines(title, px):
    fitted = screen.fit(title, px, 18)
    lines = fitted.split("<br>")
    assert len(lines) <= 2 and all(em_width(line) * 18 <= px for line in lines)
    whole = "".join(lines).replace(" ", "")
    assert whole.endswith("…") or whole == title.replace(" ", "")


def test_a_line_charts_legend_goes_under_it_and_adds_its_rows_to_the_height():
    names = ["MHA", "GQA (8 K/V heads)", "MQA (1 K/V head)", "MLA", "window (GQA)"]
    data = [scatter([1, 2], [1, 2], name) for name in names]
    title = "Cache size against context: Llama-3-8B's layers, heads and width"
    desktop = line_figure(data, {}, title, 300).to_dict()["layout"]
    with screen.at(358):
        phone = line_figure(data, {}, title, 300).to_dict()["layout"]
    assert desktop["legend"]["yref"] == "container" and desktop["legend"]["y"] == 0
    assert phone["height"] > desktop["height"] >= 300
    assert "<br>" in phone["title"]["text"] and phone["margin"]["t"] > desktop["margin"]["t"]


def test_the_projector_wraps_panel_titles_again_for_its_larger_type():
    rng = np.random.default_rng(0)
    mats = [rng.normal(size=(5, 4)) for _ in range(4)]
    titles = ["q, head 1", "q rotated, head 1", "k, K/V head 1", "k rotated, K/V head 1"]
    shown = projector(grid_figure(mats, titles, TOKENS[:5], ["d0", "d1", "d2", "d3"]), n_rows=5).to_dict()
    notes = shown["layout"]["annotations"]
    assert any("<br>" in note["text"] for note in notes)  # 22-px titles on four panels of 820 px need two lines
    assert shown["layout"]["margin"]["t"] >= screen.line_px(22, 2)
