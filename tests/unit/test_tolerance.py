"""attnlab.tolerance: the bound follows the size of the values, non-finite values are compared as values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab.limits import RTOL_FLOAT32, RTOL_FLOAT64, TOL_FLOAT32, TOL_FLOAT64
from attnlab.tolerance import bound, max_diff, pair_for, size, within
from tests.near import assert_near


def test_the_bound_is_the_floor_plus_the_relative_part_of_the_largest_value():
    assert bound(torch.tensor([0.01, -6.0]), 1e-5, 1e-5) == pytest.approx(1e-5 + 6e-5)
    assert bound(np.zeros(3), 1e-5, 1e-5) == 1e-5  # values near zero: the floor alone
    assert bound([1.0, float("inf"), float("nan")], 1e-5, 1e-5) == pytest.approx(2e-5)  # the finite values' size
    assert size(torch.empty(0)) == 0.0


def test_a_small_value_carries_the_rounding_of_the_large_ones_beside_it():
    """The logit of 0.01 in a row reaching 6 is allowed 7e-5, where an elementwise rtol would allow 1e-5."""
    ref = torch.tensor([0.01, 6.0])
    moved = ref + torch.tensor([3e-5, 0.0])
    assert within(moved, ref, TOL_FLOAT32, RTOL_FLOAT32)
    assert not torch.allclose(moved, ref, rtol=RTOL_FLOAT32, atol=TOL_FLOAT32)
    assert not within(ref + torch.tensor([1e-3, 0.0]), ref, TOL_FLOAT32, RTOL_FLOAT32)


def test_non_finite_values_must_agree_as_values():
    inf, nan = float("inf"), float("nan")
    assert max_diff([1.0, -inf, nan], [1.0, -inf, nan]) == 0.0
    assert max_diff([1.0, inf], [1.0, -inf]) == math.inf
    assert max_diff([nan], [0.0]) == math.inf and max_diff([0.0], [nan]) == math.inf
    assert max_diff(torch.tensor([[1.0, 2.0]]), torch.tensor([1.0, 2.5])) == 0.5  # broadcast as numpy does


def test_each_dtype_has_its_pair():
    assert pair_for(torch.float64) == pair_for(np.float64) == (TOL_FLOAT64, RTOL_FLOAT64)
    assert pair_for(torch.float32) == pair_for(torch.bfloat16) == pair_for(np.float32) == (TOL_FLOAT32, RTOL_FLOAT32)


def test_assert_near_names_the_bound_and_checks_the_shape():
    assert_near(torch.tensor([1.0, 5.0]), torch.tensor([1.0, 5.00004]))  # within 1e-5 + 5e-5
    with pytest.raises(AssertionError, match=r"max \|Δ\| = 0.001 > 6e-05"):
        assert_near(torch.tensor([1.0, 5.001]), torch.tensor([1.0, 5.0]))
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_near(torch.zeros(2), torch.zeros(3))
    with pytest.raises(AssertionError):
        assert_near(np.array([1.0 + 1e-9]), np.array([1.0]))  # float64: 2e-12 allowed
