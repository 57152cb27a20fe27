"""One background run per server process at a time (a training, a timing sweep), in its own thread with a budget.

A page starts a run for its session; a session that asks while another's run is going is refused and told how
long that one has left (the caller keeps its own settings: nothing of a refused request is stored). The worker
only appends what each step yields under a lock; every session draws its own text and figures from a copy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

StepFn = Callable[[], Iterable[tuple[int, object]]]  # yields (step, value) as the run goes: a loss, a document so far


@dataclass(frozen=True)
class Progress:
    """What a page needs to draw a run: whose it is, how far it got, what each step gave, how it ended."""

    owner: str = ""
    total: int = 0
    started: float = 0.0
    steps: tuple[int, ...] = ()
    values: tuple[object, ...] = ()
    running: bool = False
    ended: str = ""  # "", "done", "budget" (stopped at the time cap) or "failed: <reason>"

    @property
    def done(self) -> int:
        """Steps completed."""
        return self.steps[-1] if self.steps else 0

    def left_s(self, now: float, budget_s: float) -> int:
        """About how many seconds until the run ends: from its pace, never past its time budget."""
        elapsed = now - self.started
        pace = elapsed / self.done * (self.total - self.done) if self.done else budget_s - elapsed
        return max(1, round(min(pace, budget_s - elapsed)))


@dataclass
class Runner:
    """The server's one run of a kind: a lock, the progress so far, the worker thread."""

    budget_s: float
    name: str = "attnlab-live"
    progress: Progress = field(default_factory=Progress)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> Progress:
        """A copy of the progress, safe to draw from."""
        with self.lock:
            return self.progress

    def wait_s(self) -> int:
        """About how long until a new run can start (0: now)."""
        p = self.snapshot()
        return p.left_s(time.monotonic(), self.budget_s) if p.running else 0

    def start(self, owner: str, total: int, work: StepFn) -> bool:
        """Start `work` for `owner` unless a run is going; False when busy."""
        with self.lock:
            if self.progress.running:
                return False
            self.progress = Progress(owner, total, time.monotonic(), running=True)
        threading.Thread(target=self._work, args=(work,), daemon=True, name=self.name).start()
        return True

    def _work(self, work: StepFn) -> None:
        """Run the steps, keeping what each yields, until done, out of time or failed."""
        ended = "done"
        try:
            for step, value in work():
                with self.lock:
                    p = self.progress
                    self.progress = replace(p, steps=(*p.steps, step), values=(*p.values, value))
                if time.monotonic() - p.started > self.budget_s:
                    ended = "budget"
                    break
        except Exception as failure:  # noqa: BLE001 -- a failed run must free the server's one slot and say why
            ended = f"failed: {failure}"
        with self.lock:
            self.progress = replace(self.progress, running=False, ended=ended)
