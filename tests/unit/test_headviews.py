"""The head finder's ranking, shared by the Real model and Attention file pages."""

import numpy as np

from attnlab.ui.parts.headviews import ranked


def test_the_finder_ranks_highest_first_and_breaks_ties_in_layer_then_head_order():
    grid = np.array([[0.2, 0.9, 0.5], [0.9, 0.1, 0.5]])  # (L, H)
    assert ranked(grid) == [(1, 2, 0.9), (2, 1, 0.9), (1, 3, 0.5), (2, 3, 0.5), (1, 1, 0.2), (2, 2, 0.1)]
