"""The Trained decoder page's one live training run per server process (the generic runner is `attnlab.live`).

A session that asks while another's run is going gets how long that one has left. Each step's value is its loss.
"""

from __future__ import annotations

from attnlab.limits import LIVE_TRAIN_BUDGET_S
from attnlab.live import Progress, Runner

__all__ = ["RUNNER", "Progress", "Runner"]

RUNNER = Runner(LIVE_TRAIN_BUDGET_S, "attnlab-live-train")  # one per server process, shared by every session
