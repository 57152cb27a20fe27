"""The live-training runner: one run at a time, every loss kept, the budget and failures end it and free the slot."""

from __future__ import annotations

import threading

from attnlab.ui.pages.decoder.live import Progress, Runner


def wait_until_free(runner: Runner) -> Progress:
    """Block until the worker has ended its run (no sleeping on the clock: poll the lock-guarded state)."""
    while True:
        p = runner.snapshot()
        if not p.running:
            return p
        threading.Event().wait(0.01)


def test_a_second_run_is_refused_while_one_goes_then_allowed():
    go = threading.Event()

    def train():
        go.wait()
        yield from ((s, 1.0 / s) for s in range(1, 6))

    runner = Runner(budget_s=1e9)
    assert runner.start("a", 5, train)
    assert not runner.start("b", 5, train)
    assert runner.snapshot().owner == "a"
    go.set()
    p = wait_until_free(runner)
    assert p.ended == "done" and p.steps == (1, 2, 3, 4, 5) and p.losses == tuple(1.0 / s for s in range(1, 6))
    assert runner.start("b", 5, train) and wait_until_free(runner).owner == "b"


def test_the_time_budget_stops_a_run():
    runner = Runner(budget_s=0.0)
    runner.start("a", 1000, lambda: ((s, 0.5) for s in range(1, 1001)))
    p = wait_until_free(runner)
    assert p.ended == "budget" and p.done < 1000


def test_a_failing_run_says_why_and_frees_the_slot():
    def train():
        yield 1, 2.0
        raise RuntimeError("out of memory")

    runner = Runner(budget_s=1e9)
    runner.start("a", 10, train)
    p = wait_until_free(runner)
    assert p.ended == "failed: out of memory" and p.steps == (1,)
    assert runner.start("b", 10, train)


def test_time_left_follows_the_pace_within_the_budget():
    p = Progress("a", 100, started=0.0, steps=(25,), losses=(1.0,), running=True)
    assert p.left_s(now=10.0, budget_s=60.0) == 30  # 25 steps took 10 s: 75 more take 30 s
    assert p.left_s(now=10.0, budget_s=20.0) == 10  # but the budget ends it sooner
