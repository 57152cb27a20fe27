"""A class pressing Run together on the Benchmark page: the server runs one sweep, the others are told to wait.

usage: python scripts/class_bench.py [--sessions 30] [--query 'seq=64,128,256,512&heads=4'] [--out FILE.json]

Starts a real `streamlit run` here, opens N browser sessions (headless Chromium, each its own context) on
/benchmark with the same sizes, arms a timer in every page so that all N press Run at one wall-clock
moment, and samples the server process's resident memory (/proc/<pid>/status VmRSS) every 20 ms from
before the press until the one sweep that started has ended. It prints the peak against
`SERVER_MEMORY_CAP_BYTES` (attnlab/limits.py: the hosted app's largest memory), what the press added over
the idle server against `MEMORY_CAP_BYTES` (what one request may allocate), how many sessions started a
run (must be 1) and how many were told a run is going, and the winner's "how busy the machine was" line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time

from attnlab.limits import MEMORY_CAP_BYTES, SERVER_MEMORY_CAP_BYTES
from attnlab.testing import BROWSER_ARGS, open_app, rss_bytes, serve_app
from attnlab.ui.app.i18n import catalog

MIB = 2**20
CAT = catalog("en")
BUSY = CAT["benchmark.busy"].split("{")[0].strip()  # "Another visitor's run is timing on this server ..."
PRESS_RUN_AT = """target => setTimeout(() =>
    document.querySelector('[data-testid="stBaseButton-primary"]').click(), target - Date.now())"""


class RssTrace:
    """The server's resident memory sampled every 20 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.samples, self._stop = pid, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError, StopIteration):
                self.samples.append((time.time(), rss_bytes(self.pid)))
            time.sleep(0.02)

    def __enter__(self) -> RssTrace:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak(self) -> int:
        return max(rss for _, rss in self.samples)


def outcome(tab) -> str:
    """'busy' (told a run is going), 'running' or 'ran' (this session's sweep), or '' while nothing has come back."""
    text = tab.locator('[data-testid="stMain"]').inner_text()
    if BUSY in text:
        return "busy"
    if CAT["benchmark.your_run"] in text:
        return "ran"
    if tab.locator('[data-testid="stProgress"]').count():
        return "running"
    return ""


def wait_all(tabs: list, timeout_s: float = 300.0) -> list[str]:
    """Every tab's outcome once each has one (the server answers the N presses one script run at a time)."""
    deadline, seen = time.monotonic() + timeout_s, [""] * len(tabs)
    while time.monotonic() < deadline and not all(seen):
        seen = [s or outcome(tab) for s, tab in zip(seen, tabs, strict=True)]
        time.sleep(0.2)
    return seen


def press_together(browser, url: str, n: int, query: str, pid: int) -> dict:
    """Open n sessions, press Run in all at one moment, follow memory until the one sweep has ended."""
    contexts, tabs = [], []
    for _ in range(n):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        open_app(tab, url, f"/benchmark?lang=en&{query}")
        contexts.append(context)
        tabs.append(tab)
    idle = rss_bytes(pid)
    moment = time.time() + 2.0 + 0.05 * n  # time to arm every tab first
    with RssTrace(pid) as trace:
        for tab in tabs:
            tab.evaluate(PRESS_RUN_AT, moment * 1000)
        seen = wait_all(tabs)
        winners = [i for i, s in enumerate(seen) if s in ("running", "ran")]
        for i in winners:
            tabs[i].get_by_text(CAT["benchmark.your_run"], exact=True).wait_for(timeout=300_000)
        ended = time.time()
    load_line = ""
    if winners:
        captions = tabs[winners[0]].locator('[data-testid="stCaptionContainer"]').all_inner_texts()
        load_line = next((c for c in captions if "cores busy" in c), "")
    for context in contexts:
        context.close()
    peak = trace.peak
    return {
        "sessions": n,
        "query": query,
        "started_a_run": len(winners),
        "told_busy": seen.count("busy"),
        "no_answer": seen.count(""),
        "seconds_from_press_to_sweep_end": round(ended - moment, 1),
        "server_rss_idle_mib": round(idle / MIB, 1),
        "server_rss_peak_mib": round(peak / MIB, 1),
        "press_added_mib": round((peak - idle) / MIB, 1),
        "server_cap_mib": round(SERVER_MEMORY_CAP_BYTES / MIB, 1),
        "one_request_cap_mib": round(MEMORY_CAP_BYTES / MIB, 1),
        "winner_load_line": load_line,
        "ok": len(winners) == 1
        and seen.count("busy") == n - 1
        and peak <= SERVER_MEMORY_CAP_BYTES
        and peak - idle <= MEMORY_CAP_BYTES,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--query", default="seq=64,128,256,512,1024&heads=4&head_dim=64", help="the Benchmark page's sizes")
    ap.add_argument("--clients-nice", type=int, default=19, help="niceness of the driver and its Chromium")
    ap.add_argument("--out")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        served = stack.enter_context(serve_app(".class-bench-server.log"))
        os.nice(args.clients_nice)  # the browsers stand for the students' own devices
        p = stack.enter_context(sync_playwright())
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        stack.callback(browser.close)
        open_app(browser.new_page(), served.url, "/benchmark?lang=en")  # warm: the first run imports torch
        report = press_together(browser, served.url, args.sessions, args.query, served.proc.pid)
    print(json.dumps(report, indent=1), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
