"""The server's warm-up: it imports what the default page needs, on idle CPU, touching no other thread's priority,
and back at normal priority as soon as a session may wait on it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading

import pytest

from attnlab.pipeline import LabConfig
from attnlab.testing import ROOT
from attnlab.ui.app import warmup

lifts = pytest.mark.skipif(not warmup.can_lift(), reason="this process cannot leave SCHED_IDLE (or has none)")


def wait_for_policy(tid: int, policy: int) -> None:
    """Block until thread `tid` runs under `policy`."""
    while os.sched_getscheduler(tid) != policy:
        threading.Event().wait(0.01)


@lifts
def test_idle_priority_applies_to_the_calling_thread_only():
    seen: dict[str, object] = {}

    def probe() -> None:
        seen["applied"] = warmup.idle_priority()
        seen["policy"] = os.sched_getscheduler(0)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    assert seen == {"applied": True, "policy": os.SCHED_IDLE}
    assert os.sched_getscheduler(0) != os.SCHED_IDLE  # the thread that started it (a session's, say) is untouched


@lifts
def test_the_warm_up_imports_the_first_page_and_runs_its_pipeline_at_idle_priority(monkeypatch):
    done: list[tuple[object, int]] = []
    monkeypatch.setattr(warmup.importlib, "import_module", lambda name: done.append((name, os.sched_getscheduler(0))))
    monkeypatch.setattr("attnlab.pipeline.run_lab", lambda config: done.append((config, os.sched_getscheduler(0))))
    thread = warmup.start()
    thread.join(timeout=60)
    assert not thread.is_alive() and thread.daemon  # a server that stops is never held up by it
    assert [what for what, _ in done] == [*warmup.MODULES, LabConfig()]
    assert {policy for _, policy in done} == {os.SCHED_IDLE}


@lifts
def test_a_session_puts_a_warm_up_still_importing_back_at_normal_priority(monkeypatch):
    """At idle priority on busy cores, the module a session waits for took minutes to import (see warmup's note)."""
    release, seen = threading.Event(), []

    def slow_import(name: str) -> None:  # the warm-up's first import, held until the session has started
        release.wait()
        seen.append(os.sched_getscheduler(0))

    monkeypatch.setattr(warmup.importlib, "import_module", slow_import)
    monkeypatch.setattr("attnlab.pipeline.run_lab", lambda config: None)
    thread = warmup.start()
    wait_for_policy(thread.native_id, os.SCHED_IDLE)
    warmup.hurry()  # what every session's run does first
    assert os.sched_getscheduler(thread.native_id) == os.SCHED_OTHER
    release.set()
    thread.join(timeout=60)
    assert seen == [os.SCHED_OTHER] * len(warmup.MODULES)
    warmup.hurry()  # once it has ended there is nothing to lift: a no-op, never another thread's priority


def test_where_idle_priority_could_not_be_given_back_the_warm_up_keeps_normal_priority(monkeypatch):
    monkeypatch.setattr(warmup, "can_lift", lambda: False)
    seen = []
    thread = threading.Thread(target=lambda: seen.append((warmup.idle_priority(), os.sched_getscheduler(0))))
    thread.start()
    thread.join()
    assert seen == [(False, os.SCHED_OTHER)]


def page_imports(path: str) -> list[str]:
    """The attnlab modules a page's file imports at its top."""
    names = []
    for node in ast.parse((ROOT / path).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("attnlab"):
            names += [f"{node.module}.{a.name}" if node.module == "attnlab.ui" else node.module for a in node.names]
    return names


def test_the_servers_warm_up_leaves_the_default_page_nothing_heavy_to_import_and_torch_one_thread():
    """What the Playground and the router import that the warm-up did not must be attnlab's own light modules; and
    the server's lifespan, run as `streamlit run` runs it with no OMP_NUM_THREADS set, gives torch one thread."""
    wanted = ["attnlab.ui.app.preload", *page_imports("views/playground.py")]
    code = (
        "import asyncio, importlib, sys, threading\n"
        "from attnlab.ui.app import router, warmup\n"
        "warmup.can_lift = lambda: False\n"  # at normal priority: on busy cores an idle main thread crawled (100 s)
        "async def serve():\n"
        "    async with router.warm_in_background(None):\n"
        "        [t.join() for t in threading.enumerate() if t.name == 'attnlab-warm']\n"
        "asyncio.run(serve())\n"
        "before = set(sys.modules)\n"
        f"for name in {wanted!r}: importlib.import_module(name)\n"
        "print(sys.modules['torch'].get_num_threads())\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}  # as a server starts, not as tests do
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    threads, imported = out.stdout.strip().splitlines()[-2:]
    new = ast.literal_eval(imported)
    assert "torch" not in wanted and [m for m in new if not m.startswith("attnlab.")] == [], new
    assert int(threads) == 1
