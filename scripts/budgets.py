"""Measure the DESIGN.md budgets: Playground rerun latency, bytes per rerun, cold start, memory per session.

usage: python scripts/budgets.py [--reruns 30] [--sessions 10] [--out budgets.json]
Rerun latency is measured in-process with Streamlit's AppTest (the script run plus the
serialisation of every element); bytes, cold start and session memory need Debian's
Chromium (/usr/bin/chromium) and a real `streamlit run`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LARGE_TEXT = " ".join(f"w{i}" for i in range(64))
SETTINGS = {
    "default": {},
    "64 tokens, d_model 64, 8 heads": {"text": LARGE_TEXT, "d_model": "64", "heads": "8"},
}
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


def rerun_ms(query: dict[str, str], reruns: int) -> dict[str, float]:
    """Median and p90 of a Playground rerun (server side), after one warm-up run."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    times = []
    for i in range(reruns):
        at.toggle(key="lab.causal").set_value(i % 2 == 0)  # a real widget change each time
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"median_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))]}


def _rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))


def browser_budgets(n_sessions: int) -> dict:
    """Cold start to first drawn chart, websocket bytes of one rerun, and server memory per session."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import serve_app, settle

    out: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        start = time.perf_counter()  # the browser is up: from here on it is the app's cold start
        with serve_app(".budgets-server.log") as served:
            url = served.url
            healthy = time.perf_counter()
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            tab.goto(url + "/")
            tab.wait_for_selector("h1", timeout=120_000)
            titled = time.perf_counter()
            tab.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=120_000)
            out["cold_start_s"] = time.perf_counter() - start
            out["cold_start_parts_s"] = {
                "server healthy": healthy - start,
                "page title drawn (first script run)": titled - healthy,
                "first chart drawn": time.perf_counter() - titled,
            }
            settle(tab)

            received: list[int] = []
            tab.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(len(f))))
            for name, query in SETTINGS.items():
                tab.goto(url + "/?" + "&".join(f"{k}={v.replace(' ', '+')}" for k, v in query.items()))
                settle(tab)
                received.clear()
                tab.get_by_text("Causal mask").click()
                tab.wait_for_timeout(500)
                settle(tab)
                out[f"rerun_bytes[{name}]"] = sum(received)

            base = _rss_bytes(served.proc.pid)  # one session already open and warm
            for _ in range(n_sessions):
                extra = browser.new_context().new_page()
                extra.goto(url + "/")
                settle(extra)
            time.sleep(2)
            after = _rss_bytes(served.proc.pid)
            out["server_rss_before_mb"] = base / 2**20
            out["server_rss_after_mb"] = after / 2**20
            out["mb_per_idle_session"] = (after - base) / n_sessions / 2**20
        browser.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reruns", type=int, default=30)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    report: dict = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    }
    for name, query in SETTINGS.items():
        report[f"rerun[{name}]"] = rerun_ms(query, args.reruns)
    if Path("/usr/bin/chromium").exists():
        report.update(browser_budgets(args.sessions))
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
