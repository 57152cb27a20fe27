"""`assert_near`: the tests' float comparison, with the tolerance `attnlab.tolerance` gives the app's own checks.

|actual - expected| <= atol + rtol * max|expected| over the whole tensor (see attnlab/tolerance.py for why the
relative part follows the size of the values rather than each element). The pair defaults to the dtype of the
numbers compared: float64's (1e-12, 1e-12) or float32's (1e-5, 1e-5) from attnlab.limits; a test that needs another
names it from there, with a comment saying why.
"""

from __future__ import annotations

import numpy as np
import torch

from attnlab.tolerance import bound, max_diff, pair_for, size


def _dtype(x):
    """The dtype the numbers were computed in (float64 for plain Python numbers)."""
    if isinstance(x, torch.Tensor | np.ndarray):
        return x.dtype
    return np.float64


def assert_near(actual, expected, pair: tuple[float, float] | None = None, msg: str = "") -> None:
    """Same shape, and every |actual - expected| within atol + rtol * max|expected| (pair = (atol, rtol))."""
    shape_a, shape_e = tuple(np.shape(actual)), tuple(np.shape(expected))
    assert shape_e in ((), shape_a), f"{msg} shapes differ: {shape_a} against {shape_e}"
    atol, rtol = pair if pair is not None else pair_for(_dtype(actual))
    diff, allowed = max_diff(actual, expected), bound(expected, atol, rtol)
    assert diff <= allowed, (
        f"{msg} max |Δ| = {diff:.3g} > {allowed:.3g} = {atol:g} + {rtol:g} x {size(expected):.3g} (max |expected|)"
    )
