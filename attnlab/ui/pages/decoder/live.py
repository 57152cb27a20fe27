"""One live training run per server process, in its own thread with a fixed budget, polled by the page.

A session that asks while another's run is going gets how long that one has left. The worker only
appends numbers (step, loss) under a lock; every session draws its own text and figures from a copy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from attnlab.limits import LIVE_TRAIN_BUDGET_S

StepFn = Callable[[], Iterable[tuple]]  # yields (step, loss) or (step, loss, head scores or None) as training goes


@dataclass(frozen=True)
class Progress:
    """What a page needs to draw a run: whose it is, how far it got, its losses, how it ended."""

    owner: str = ""
    total: int = 0
    started: float = 0.0
    steps: tuple[int, ...] = ()
    losses: tuple[float, ...] = ()
    running: bool = False
    ended: str = ""  # "", "done", "budget" (stopped at the time cap) or "failed: <reason>"
    score_steps: tuple[int, ...] = ()  # the steps at which the heads were scored
    scores: tuple[tuple[float, ...], ...] = ()  # every head's induction score (L x H, flat) at those steps

    @property
    def done(self) -> int:
        """Steps completed."""
        return self.steps[-1] if self.steps else 0

    def change(self, threshold: float) -> tuple[int, int, float] | None:
        """The first scored step at which some head's induction score reached `threshold`: (step, head, score)."""
        for step, row in zip(self.score_steps, self.scores, strict=True):
            best = max(range(len(row)), key=row.__getitem__)
            if row[best] >= threshold:
                return step, best, row[best]
        return None

    def left_s(self, now: float, budget_s: float) -> int:
        """About how many seconds until the run ends: from its pace, never past its time budget."""
        elapsed = now - self.started
        pace = elapsed / self.done * (self.total - self.done) if self.done else budget_s - elapsed
        return max(1, round(min(pace, budget_s - elapsed)))


@dataclass
class Runner:
    """The server's one live run: a lock, the progress so far, the worker thread."""

    budget_s: float = LIVE_TRAIN_BUDGET_S
    progress: Progress = field(default_factory=Progress)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> Progress:
        """A copy of the progress, safe to draw from."""
        with self.lock:
            return self.progress

    def start(self, owner: str, total: int, train: StepFn) -> bool:
        """Start `train` for `owner` unless a run is going; False when busy."""
        with self.lock:
            if self.progress.running:
                return False
            self.progress = Progress(owner, total, time.monotonic(), running=True)
        threading.Thread(target=self._work, args=(train,), daemon=True, name="attnlab-live-train").start()
        return True

    def _work(self, train: StepFn) -> None:
        """Run the steps, recording each loss, until done, out of time or failed."""
        ended = "done"
        try:
            for step, loss, *more in train():
                scores = more[0] if more else None
                with self.lock:
                    p = self.progress
                    p = replace(p, steps=(*p.steps, step), losses=(*p.losses, float(loss)))
                    if scores is not None:
                        p = replace(p, score_steps=(*p.score_steps, step), scores=(*p.scores, tuple(scores)))
                    self.progress = p
                if time.monotonic() - p.started > self.budget_s:
                    ended = "budget"
                    break
        except Exception as failure:  # noqa: BLE001 -- a failed run must free the server's one slot and say why
            ended = f"failed: {failure}"
        with self.lock:
            self.progress = replace(self.progress, running=False, ended=ended)


RUNNER = Runner()  # one per server process, shared by every session
