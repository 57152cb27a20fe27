"""Warm the server while the first browser loads: import the first page's modules on otherwise idle CPU.

`app.py`'s lifespan calls `start()` when `streamlit run` starts. The warm-up is speculative work, so it runs
at Linux's idle scheduling priority: while the cores are busy (a browser loading the frontend on the same
machine, other work) it gets only the CPU time they leave. Until someone waits on it: a session that needs a module
the warm-up is importing waits for that import (Python's import lock), and at idle priority on cores kept busy
that took minutes (torch, 243 s against 12 s at normal priority, with two busy loops on 2 cores). So every run
first calls `hurry()`, which puts the warm-up back at normal priority, and the warm-up takes idle priority only
where the process can give it back (`can_lift`: not, say, root in a container without CAP_SYS_NICE).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import threading

MODULES = (  # the router and the default page (views/playground.py), torch first among what they import
    "attnlab.ui.app.registry",
    "attnlab.ui.app.shell",
    "attnlab.ui.parts.lab",
    "attnlab.ui.parts.stages",
    "attnlab.ui.parts.pack",
    "attnlab.ui.pages.playground.editor",
    "attnlab.ui.pages.playground.whatif",
)


_LOCK = threading.Lock()
_IDLE: dict[str, int] = {}  # "tid": the warm-up thread's native id while it runs at idle priority


@functools.cache
def can_lift() -> bool:
    """Whether a thread of this process can go from idle back to normal priority, tried once on a thread of its own
    (leaving SCHED_IDLE takes CAP_SYS_NICE or an RLIMIT_NICE of 20; a thread that stays idle here just ends)."""
    if not hasattr(os, "SCHED_IDLE"):  # Linux only
        return False
    lifted: list[bool] = []

    def probe() -> None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            lifted.append(True)

    thread = threading.Thread(target=probe, name="attnlab-can-lift", daemon=True)
    thread.start()
    thread.join()
    return lifted == [True]


def idle_priority() -> bool:
    """Run the calling thread only on CPU time nothing else wants (SCHED_IDLE); False where that is not offered, or
    could not be given back (`can_lift`)."""
    if not can_lift():
        return False
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # 0: this thread (Linux schedules each thread)
        return True
    return False


def hurry() -> None:
    """Someone is waiting: put the warm-up back at normal priority (a no-op once it is done, or where none runs)."""
    with _LOCK:
        tid = _IDLE.pop("tid", None)
        if tid is not None:
            with contextlib.suppress(OSError):
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))


def warm() -> None:
    """Import what the first page needs and run its pipeline once, so the first visitor waits for neither."""
    can_lift()  # its probe first, outside the lock (a thread at idle priority may itself wait for CPU time)
    with _LOCK:
        if idle_priority():
            _IDLE["tid"] = threading.get_native_id()
    try:
        for name in MODULES:
            importlib.import_module(name)
        from attnlab.pipeline import LabConfig, run_lab

        run_lab(LabConfig())
    finally:
        with _LOCK:
            _IDLE.pop("tid", None)  # a thread id the system may give to another thread once this one ends


def start() -> threading.Thread:
    """Start `warm` in a daemon thread; the server's start and its health check never wait for it."""
    thread = threading.Thread(target=warm, name="attnlab-warm", daemon=True)
    thread.start()
    return thread
