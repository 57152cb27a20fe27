"""Warm the server while the first browser loads: import the first page's modules on otherwise idle CPU.

`app.py`'s lifespan calls `start()` when `streamlit run` starts. The warm-up is speculative work, so it runs
at Linux's idle scheduling priority: while the cores are busy (a browser loading the frontend on the same
machine, other sessions' scripts) it gets only the CPU time they leave, and it never slows what someone is
waiting on. A session that needs a module still being imported waits for it, as it would have imported it.
"""

from __future__ import annotations

import contextlib
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


def idle_priority() -> bool:
    """Run the calling thread only on CPU time nothing else wants (SCHED_IDLE); False where that is not offered."""
    policy = getattr(os, "SCHED_IDLE", None)  # Linux only
    if policy is None:
        return False
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, policy, os.sched_param(0))  # 0: this thread (Linux schedules each thread)
        return True
    return False


def warm() -> None:
    """Import what the first page needs and run its pipeline once, so the first visitor waits for neither."""
    idle_priority()
    for name in MODULES:
        importlib.import_module(name)
    from attnlab.pipeline import LabConfig, run_lab

    run_lab(LabConfig())


def start() -> threading.Thread:
    """Start `warm` in a daemon thread; the server's start and its health check never wait for it."""
    thread = threading.Thread(target=warm, name="attnlab-warm", daemon=True)
    thread.start()
    return thread
