"""How close two computations of the same numbers must be: a floor, plus a part that follows the size of the values.

A float sum rounds by an amount that follows the size of its terms, not of its result. Two paths that sum the same
few hundred products in another order (another SIMD width, another BLAS kernel, a batch of another shape) differ by
about RTOL times the size of the values, even where one result is near zero: a logit of 0.01 in a row whose logits
reach 6 carries the rounding of the 6. So a comparison allows

    |ours - reference| <= atol + rtol * max|reference|

over the whole tensor compared, with `atol` the floor for values that are all near zero. The named pairs live in
`attnlab.limits` (TOL_FLOAT32 with RTOL_FLOAT32, TOL_FLOAT64 with RTOL_FLOAT64, TOL_LM_LOGITS with RTOL_LM_LOGITS);
the app's own checks against PyTorch and the tests read them through here. Elementwise `rtol` (numpy's and torch's
allclose) would demand more of a small value than its own sum could give.
"""

from __future__ import annotations

import numpy as np
import torch

from attnlab.limits import RTOL_FLOAT32, RTOL_FLOAT64, TOL_FLOAT32, TOL_FLOAT64

FOR_DTYPE = {torch.float32: (TOL_FLOAT32, RTOL_FLOAT32), torch.float64: (TOL_FLOAT64, RTOL_FLOAT64)}


def _array(x) -> np.ndarray:
    """A tensor, array or number as a float64 numpy array (NaN stays NaN)."""
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def pair_for(dtype) -> tuple[float, float]:
    """(atol, rtol) for numbers computed in this dtype (a torch or numpy dtype); float32's for anything narrower."""
    if dtype in (torch.float64, np.float64, np.dtype(np.float64)):
        return FOR_DTYPE[torch.float64]
    return FOR_DTYPE[torch.float32]


def size(reference) -> float:
    """The size of the values compared: the largest finite |value| (0 for none)."""
    ref = np.abs(_array(reference))
    finite = ref[np.isfinite(ref)]
    return float(finite.max()) if finite.size else 0.0


def bound(reference, atol: float, rtol: float) -> float:
    """The largest |difference| allowed against `reference`: atol + rtol * max|reference|."""
    return atol + rtol * size(reference)


def max_diff(actual, reference) -> float:
    """max |actual - reference|; equal infinities and NaN against NaN count as equal, any other non-finite is inf."""
    a, r = np.broadcast_arrays(_array(actual), _array(reference))
    differ = ~((a == r) | (np.isnan(a) & np.isnan(r)))
    if not differ.any():
        return 0.0
    gaps = np.abs(a[differ] - r[differ])
    return float(gaps.max()) if np.isfinite(gaps).all() else float("inf")


def within(actual, reference, atol: float, rtol: float) -> bool:
    """True when every |actual - reference| is within `bound(reference, atol, rtol)`."""
    return max_diff(actual, reference) <= bound(reference, atol, rtol)
