"""One live training run per server process, in its own thread with a fixed budget, polled by the page.

A session that asks while another's run is going gets how long that one has left. The slot, its thread and its
budget are `attnlab.live`'s (the Benchmark page's live sweep uses the same); this module keeps what a training
step gives: its loss and its heads' scores, appended under the runner's lock. Every session draws its own text
and figures from a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from attnlab import live
from attnlab.limits import LIVE_TRAIN_BUDGET_S

StepFn = Callable[[], Iterable[tuple]]  # yields (step, loss) or (step, loss, head scores or None) as training goes


@dataclass(frozen=True)
class Progress(live.Progress):
    """What a page needs to draw a run: whose it is, how far it got, its losses, how it ended."""

    losses: tuple[float, ...] = ()
    score_steps: tuple[int, ...] = ()  # the steps at which the heads were scored
    scores: tuple[tuple[float, ...], ...] = ()  # every head's induction score (L x H, flat) at those steps

    def add(self, step: int, loss: float, scores: Iterable[float] | None = None) -> Progress:
        """One more step, its loss and, every few steps, the heads' induction scores."""
        p = replace(self, steps=(*self.steps, step), losses=(*self.losses, float(loss)))
        if scores is not None:
            p = replace(p, score_steps=(*p.score_steps, step), scores=(*p.scores, tuple(scores)))
        return p

    def change(self, threshold: float) -> tuple[int, int, float] | None:
        """The first scored step at which some head's induction score reached `threshold`: (step, head, score)."""
        for step, row in zip(self.score_steps, self.scores, strict=True):
            best = max(range(len(row)), key=row.__getitem__)
            if row[best] >= threshold:
                return step, best, row[best]
        return None


@dataclass
class Runner(live.Runner):
    """The server's one live training run: `attnlab.live.Runner` keeping `Progress` with losses."""

    budget_s: float = LIVE_TRAIN_BUDGET_S
    name: str = "attnlab-live-train"
    kind: type[live.Progress] = Progress


RUNNER = Runner()  # one per server process, shared by every session
