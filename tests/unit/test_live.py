"""The server's one live run, as the Benchmark page uses it: one sweep at a time, the second caller told how long
and nothing of its request kept, a real sweep's documents, and the busy meter's arithmetic."""

from __future__ import annotations

import threading
import time

import pytest

import attnlab.bench.busy as busy
from attnlab.bench import BenchConfig, sweep_documents
from attnlab.bench.busy import BusyMeter
from attnlab.limits import BUSY_OTHER_CORES
from attnlab.live import HOLD_ENV, Progress, Runner
from attnlab.ui.pages.benchmark.live import Sweep

TINY = BenchConfig(
    device="cpu",
    seq_lens=(16, 32),
    heads=1,
    head_dim=8,
    impls=("explicit", "sdpa"),
    threads=1,
    warmup=0,
    min_reps=1,
    max_reps=2,
    min_time_s=0.0,
    max_time_s=0.01,
)


def wait_until_free(runner: Runner) -> Progress:
    """Block until the worker has ended its run."""
    while (p := runner.snapshot()).running:
        threading.Event().wait(0.01)
    return p


def test_one_sweep_at_a_time_the_second_caller_is_told_how_long_and_nothing_of_it_is_kept():
    gate = threading.Event()

    def first():
        gate.wait()
        yield from sweep_documents(TINY)

    runner = Runner(100.0, kind=Sweep)
    assert runner.wait_s() == 0  # idle: a run can start now
    assert runner.start("a", TINY.total, first)
    before = runner.snapshot()
    second = BenchConfig(device="cpu", seq_lens=(64,), heads=2, head_dim=16, impls=("tiled",))
    assert not runner.start("b", second.total, lambda: sweep_documents(second))
    assert 1 <= runner.wait_s() <= 100  # nothing done yet: the budget's remainder
    assert runner.snapshot() == before  # the refused request left no trace: the caller keeps its own settings
    gate.set()
    p = wait_until_free(runner)
    assert p.owner == "a" and p.ended == "done" and p.steps == (1, 2, 3, 4)
    doc = p.doc
    assert [(r["impl"], r["seq_len"]) for r in doc["results"]] == [
        ("explicit", 16),
        ("sdpa", 16),
        ("explicit", 32),
        ("sdpa", 32),
    ]
    assert doc["env"]["config"]["seq_lens"] == (16, 32) and doc["env"]["machine_load"]["cores"] >= 1
    assert runner.start("b", second.total, lambda: sweep_documents(second))
    assert wait_until_free(runner).doc["results"][0]["impl"] == "tiled"


def test_a_sweep_yields_a_whole_document_after_every_row():
    docs = list(sweep_documents(TINY))
    assert [n for n, _ in docs] == [1, 2, 3, 4] and [len(d["results"]) for _, d in docs] == [1, 2, 3, 4]
    assert all(d["env"]["machine_load"]["window_s"] >= 0 for _, d in docs)
    assert docs[1][1]["results"][0] is docs[3][1]["results"][0]  # rows shared, never copied or changed


def test_the_wait_follows_the_running_sweeps_pace():
    runner = Runner(60.0)
    runner.progress = Progress("a", 20, started=time.monotonic() - 10.0, steps=(5,), running=True)
    assert runner.wait_s() == 30  # 5 rows took 10 s: 15 more take about 30 s
    runner.progress = Progress("a", 20, started=time.monotonic() - 50.0, steps=(5,), running=True)
    assert runner.wait_s() == 10  # the budget ends it sooner


def meter_after(monkeypatch, *, other_cpu_s: float, wall_s: float, cores: int = 2) -> dict:
    """A meter started `wall_s` ago, read when the machine spent `other_cpu_s` on work besides this thread."""
    own = time.thread_time()
    meter = BusyMeter(time.monotonic() - wall_s, 1000.0, own, 1.0, cores)
    monkeypatch.setattr(busy, "busy_cpu_s", lambda: 1000.0 + other_cpu_s + (time.thread_time() - own))
    return meter.read()


def test_other_work_is_measured_as_cores_kept_busy(monkeypatch):
    load = meter_after(monkeypatch, other_cpu_s=3.0, wall_s=2.0)
    assert load["other_busy_cores"] == pytest.approx(1.5, abs=0.02) and load["busy"] is True
    assert load["other_share"] == pytest.approx(0.75, abs=0.01) and load["cores"] == 2
    quiet = meter_after(monkeypatch, other_cpu_s=0.1 * BUSY_OTHER_CORES, wall_s=1.0)
    assert quiet["busy"] is False and quiet["other_busy_cores"] < BUSY_OTHER_CORES


def test_without_proc_stat_only_the_load_average_is_kept(monkeypatch):
    monkeypatch.setattr(busy, "PROC_STAT", "/nonexistent/stat")
    load = BusyMeter.start().read()
    assert load["other_busy_cores"] is None and load["busy"] is None and load["window_s"] >= 0


def test_a_real_reading_is_bounded_by_the_machine():
    meter = BusyMeter.start()
    deadline = time.monotonic() + 0.2
    while time.monotonic() < deadline:  # this thread's own work is not "other" work
        sum(range(1000))
    load = meter.read()
    assert busy.busy_cpu_s() is not None  # Linux: /proc/stat is read
    assert 0.0 <= load["other_busy_cores"] <= load["cores"] and isinstance(load["busy"], bool)


def test_an_ended_run_waits_for_its_owner_even_when_another_starts_at_once():
    runner = Runner(100.0, kind=Sweep)
    runner.start("a", TINY.total, lambda: sweep_documents(TINY))
    wait_until_free(runner)
    gate = threading.Event()

    def held():
        gate.wait()
        yield 1, {}

    assert runner.start("b", 1, held)  # b takes the slot before a looks
    mine = runner.take("a")
    assert mine.owner == "a" and mine.ended == "done" and len(mine.doc["results"]) == TINY.total
    assert runner.take("a") is None and runner.take("b") is None  # once; b's has not ended
    gate.set()
    wait_until_free(runner)
    assert runner.take("b").ended == "done"


def test_ended_runs_nobody_collects_are_bounded(monkeypatch):
    monkeypatch.setattr("attnlab.live.MAX_FINISHED_RUNS", 3)
    runner = Runner(100.0)
    for owner in "abcde":
        runner.start(owner, 1, lambda: iter([(1,)]))
        wait_until_free(runner)
    assert list(runner.finished) == ["c", "d", "e"]  # the oldest went first


def test_a_held_run_stays_going_after_its_last_step_until_the_hold_file_goes(monkeypatch, tmp_path):
    """The browser tests' hold (HOLD_ENV): every step is recorded, the slot stays taken, then the run ends."""
    hold = tmp_path / "hold"
    monkeypatch.setenv(HOLD_ENV, str(hold))
    runner = Runner(100.0)
    runner.start("a", 1, lambda: iter([(1,)]))
    assert wait_until_free(runner).ended == "done" and runner.take("a")  # no file: nothing waits
    hold.touch()
    runner.start("a", 2, lambda: iter([(1,), (2,)]))
    while runner.snapshot().done < 2:  # the steps go on as ever
        threading.Event().wait(0.01)
    assert not runner.start("b", 1, lambda: iter([(1,)]))  # held: still going, so another caller is refused
    assert runner.snapshot().running and runner.take("a") is None
    hold.unlink()
    p = wait_until_free(runner)
    assert p.ended == "done" and p.steps == (1, 2) and runner.take("a") == p
