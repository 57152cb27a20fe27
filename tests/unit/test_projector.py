"""The presenter's projector figures: large type, and numbers that fit their cells however many panels share a row."""

from __future__ import annotations

import numpy as np

from attnlab.figures.grid import grid_figure
from attnlab.figures.matrix import matrix_figure
from attnlab.figures.projector import CELL_TEXT_MAX, CELL_TEXT_MIN, PROJECTOR_FONT, columns_across, projector

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def panels(n: int, cols: int) -> object:
    """n per-head panels of 6 tokens x `cols` dimensions, as a per-head stage draws them."""
    rng = np.random.default_rng(0)
    mats = [rng.normal(size=(len(TOKENS), cols)) for _ in range(n)]
    return grid_figure(mats, [f"head {i + 1}" for i in range(n)], TOKENS, [f"d{j}" for j in range(cols)])


def cell_sizes(fig) -> set[int]:
    """The font sizes of the numbers written in the figure's value cells."""
    return {t["textfont"]["size"] for t in fig.to_dict()["data"] if t["type"] == "heatmap" and t.get("texttemplate")}


def test_one_small_matrix_keeps_the_large_numbers_and_the_figure_passed_in_is_untouched():
    fig = matrix_figure(np.arange(24.0).reshape(6, 4), TOKENS, ["d0", "d1", "d2", "d3"])
    before = fig.to_dict()
    shown = projector(fig, n_rows=6)
    assert cell_sizes(shown) == {CELL_TEXT_MAX} and shown.to_dict()["layout"]["font"]["size"] == PROJECTOR_FONT
    assert fig.to_dict() == before


def test_numbers_shrink_as_panels_share_the_row_and_stop_at_the_smallest_legible_size():
    """Four RoPE panels of 4 columns (q, rotated q, k, rotated k) ran their 18 px numbers into each other."""
    sizes = [cell_sizes(projector(panels(n, 4), n_rows=6)) for n in (1, 2, 3, 4)]
    assert sizes[0] == {CELL_TEXT_MAX} and all(len(s) == 1 for s in sizes)
    flat = [s.pop() for s in sizes]
    assert flat == sorted(flat, reverse=True) and flat[-1] < CELL_TEXT_MAX
    assert cell_sizes(projector(panels(4, 32), n_rows=6)) == {CELL_TEXT_MIN}


def test_a_grids_second_row_of_panels_does_not_count_as_more_columns_across():
    assert columns_across(panels(4, 4).to_dict()) == 16
    assert columns_across(panels(8, 4).to_dict()) == 16  # two rows of four
    assert cell_sizes(projector(panels(8, 4), n_rows=6)) == cell_sizes(projector(panels(4, 4), n_rows=6))
