"""Least-squares fits the pages report: how fast time or memory grows with T on log-log axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def loglog_slope(xs: Sequence[float | None], ys: Sequence[float | None]) -> float | None:
    """The slope b of the least-squares line log y = a + b log x (None with fewer than two distinct usable x)."""
    pairs = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True) if x and y and x > 0 and y > 0]
    if len({x for x, _ in pairs}) < 2:
        return None
    lx, ly = np.log([x for x, _ in pairs]), np.log([y for _, y in pairs])
    return float(np.polyfit(lx, ly, 1)[0])
