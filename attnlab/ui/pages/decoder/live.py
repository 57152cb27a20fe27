"""One live training run per server process, in its own thread with a fixed budget, polled by the page.

A session that asks while another's run is going gets how long that one has left. The slot, its thread and its
budget are `attnlab.live`'s (the Benchmark page's live sweep uses the same); this module keeps what a training
step gives: its loss, appended under the runner's lock. Every session draws its own text and figures from a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from attnlab import live
from attnlab.limits import LIVE_TRAIN_BUDGET_S

StepFn = Callable[[], Iterable[tuple[int, float]]]  # yields (step, loss) as training goes


@dataclass(frozen=True)
class Progress(live.Progress):
    """What a page needs to draw a run: whose it is, how far it got, its losses, how it ended."""

    losses: tuple[float, ...] = ()

    def add(self, step: int, loss: float) -> Progress:
        """One more step and its loss."""
        return replace(self, steps=(*self.steps, step), losses=(*self.losses, float(loss)))


@dataclass
class Runner(live.Runner):
    """The server's one live training run: `attnlab.live.Runner` keeping `Progress` with losses."""

    budget_s: float = LIVE_TRAIN_BUDGET_S
    name: str = "attnlab-live-train"
    kind: type[live.Progress] = Progress


RUNNER = Runner()  # one per server process, shared by every session
