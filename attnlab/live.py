"""One background run per server process at a time (a training, a timing sweep), in its own thread with a budget.

A page starts a run for its session; a session that asks while another's run is going is refused and told how
long that one has left (the caller keeps its own settings: nothing of a refused request is stored). The worker
only records what each step yields, under a lock, through its `Progress` kind's `add`; every session draws its
own text and figures from a copy. A page subclasses `Progress` to keep what its steps give (losses, a document).

`HOLD_ENV` is for the browser tests alone: while the file it names exists, a run that has taken its last step stays
going, so a test that needs a run going (a second tab told to wait, a page that must poll to the end) holds it
there and lets it end when it is ready, however slow the machine is. Unset (as on any real server), nothing waits.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from attnlab.limits import MAX_FINISHED_RUNS

StepFn = Callable[[], Iterable[tuple]]  # yields (step, what the step gave...) as the run goes
HOLD_ENV = "ATTNLAB_LIVE_HOLD"  # browser tests: a path; while that file exists, a run stays going after its last step
HOLD_POLL_S = 0.05


def held() -> bool:
    """Whether a test holds runs open: HOLD_ENV names a file that exists (never, where HOLD_ENV is unset)."""
    path = os.environ.get(HOLD_ENV)
    return bool(path) and os.path.exists(path)


@dataclass(frozen=True)
class Progress:
    """What a page needs to draw a run: whose it is, how far it got, how it ended."""

    owner: str = ""
    total: int = 0
    started: float = 0.0
    steps: tuple[int, ...] = ()
    running: bool = False
    ended: str = ""  # "", "done", "budget" (stopped at the time cap) or "failed: <reason>"

    @property
    def done(self) -> int:
        """Steps completed."""
        return self.steps[-1] if self.steps else 0

    def add(self, step: int, *_: object) -> Progress:
        """One more step (a subclass keeps what the step gave)."""
        return replace(self, steps=(*self.steps, step))

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
    kind: type[Progress] = Progress
    progress: Progress = field(init=False)
    finished: dict[str, Progress] = field(default_factory=dict)  # owner -> their last ended run, until taken
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.progress = self.kind()

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
            self.progress = self.kind(owner, total, time.monotonic(), running=True)
        threading.Thread(target=self._work, args=(work,), daemon=True, name=self.name).start()
        return True

    def take(self, owner: str) -> Progress | None:
        """`owner`'s ended run, once: kept apart, so a run someone else starts at once does not hide it."""
        with self.lock:
            return self.finished.pop(owner, None)

    def _work(self, work: StepFn) -> None:
        """Run the steps, recording each, until done, out of time or failed."""
        ended = "done"
        try:
            for item in work():
                with self.lock:
                    p = self.progress = self.progress.add(*item)
                if time.monotonic() - p.started > self.budget_s:
                    ended = "budget"
                    break
        except Exception as failure:  # noqa: BLE001 -- a failed run must free the server's one slot and say why
            ended = f"failed: {failure}"
        while held():
            time.sleep(HOLD_POLL_S)
        with self.lock:
            self.progress = replace(self.progress, running=False, ended=ended)
            self.finished[self.progress.owner] = self.progress
            while len(self.finished) > MAX_FINISHED_RUNS:  # owners who never came back for theirs
                del self.finished[next(iter(self.finished))]
