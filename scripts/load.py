"""A class at once: N real browser sessions on one server, each on its own link, all changing a widget together.

usage: python scripts/load.py [--sessions 30] [--loads 200] [--url http://host:port] [--out FILE.json]

Without --url a `streamlit run` is started here (its CPU and memory are read from /proc); with --url
the sessions go to that address (e.g. nginx in front of deploy/replicas.sh) and only the browser-side
figures are reported. Each session opens its own Playground link (its own sentence and seed), then
every session's "Causal mask" is clicked in one burst and each one's time to settle is recorded.
Afterwards every page must still show its own tokens and seed (no cross-talk) and no exception box.
`--loads` then opens that many fresh sessions one after another and samples the server's memory, to
show whether it stays flat (a leak grows with the loads).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time

from attnlab.testing import BROWSER_ARGS, SETTLED, cpu_seconds, open_app, rss_bytes, serve_app, settle, watch

MIB = 2**20
SETTLE_BUDGET_S = 5.0  # DESIGN: 30 sessions settle within 5 s on 2 cores
IDLE_SESSION_BUDGET = 20 * MIB  # DESIGN: one idle session costs <= 20 MB of server memory


def link(i: int) -> str:
    """Session i's own state: a sentence naming it and its own seed, so cross-talk would show."""
    return f"/?text=student+{i}+reads+attention&seed={100 + i}&lang=en"


def own_state(tab, i: int) -> bool:
    """The page still shows session i's sentence and seed in its widgets (what the server last sent it)."""
    text = tab.locator('[data-testid="stTextInput"] input').first.input_value()
    seeds = tab.locator('[data-testid="stNumberInput"] input').evaluate_all("els => els.map(e => e.value)")
    return text == f"student {i} reads attention" and str(100 + i) in seeds


def burst(tabs: list) -> list[float]:
    """Click every tab's causal toggle as fast as one driver can, then wait for each; seconds to settle each."""
    started = []
    for tab in tabs:
        started.append(time.perf_counter())
        tab.get_by_text("Causal mask", exact=True).first.click(no_wait_after=True)
    times = []
    for tab, t0 in zip(tabs, started, strict=True):
        tab.wait_for_function("() => location.search.includes('causal=true')", timeout=120_000)
        tab.wait_for_function(SETTLED, timeout=120_000)
        times.append(time.perf_counter() - t0)
    return times


def no_exception(tab) -> bool:
    """No Streamlit exception box on the page."""
    return tab.locator('[data-testid="stException"]').count() == 0


def sessions(browser, url: str, n: int, pid: int | None) -> dict:
    """Open n sessions, measure the idle memory they cost, then the burst."""
    rss_before = rss_bytes(pid) if pid else None
    contexts, tabs = [], []
    for i in range(n):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        open_app(tab, url, link(i))
        contexts.append(context)
        tabs.append(tab)
    rss_idle = rss_bytes(pid) if pid else None
    cpu0 = cpu_seconds(pid) if pid else None
    times = burst(tabs)
    cpu = cpu_seconds(pid) - cpu0 if pid else None
    crossed = [i for i, tab in enumerate(tabs) if not (f"student+{i}+" in tab.url and "causal=true" in tab.url)]
    shown = [i for i, tab in enumerate(tabs) if not own_state(tab, i)]
    errors = [i for i, tab in enumerate(tabs) if not no_exception(tab)]
    for context in contexts:
        context.close()
    per_session = (rss_idle - rss_before) / n if pid else None
    return {
        "sessions": n,
        "settle_p50_s": statistics.median(times),
        "settle_max_s": max(times),
        "settle_budget_s": SETTLE_BUDGET_S,
        "server_cpu_s_for_the_burst": cpu,
        "server_rss_before_mib": rss_before / MIB if pid else None,
        "server_rss_idle_mib": rss_idle / MIB if pid else None,
        "idle_mib_per_session": per_session / MIB if pid else None,
        "sessions_with_wrong_link": crossed,
        "sessions_not_showing_own_tokens": shown,
        "sessions_with_exception": errors,
        "ok": max(times) <= SETTLE_BUDGET_S
        and not crossed
        and not errors
        and not shown
        and (per_session is None or per_session <= IDLE_SESSION_BUDGET),
    }


def leak_curve(browser, url: str, loads: int, pid: int, every: int = 20) -> dict:
    """Open `loads` fresh sessions one after another (each closed before the next); server RSS every `every` loads."""
    curve = []
    for i in range(1, loads + 1):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        watch(tab)
        tab.goto(url + link(i % 7))
        settle(tab)
        context.close()
        if i % every == 0:
            curve.append((i, rss_bytes(pid) / MIB))
    half = curve[len(curve) // 2][1]
    return {"loads": loads, "rss_mib_by_loads": curve, "growth_second_half_mib": curve[-1][1] - half}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--loads", type=int, default=200, help="fresh page loads for the leak curve (0: skip)")
    ap.add_argument("--url", help="an app already served (e.g. through nginx); default: start one here")
    ap.add_argument("--out")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    report: dict = {}
    with contextlib.ExitStack() as stack:
        pid = None
        url = args.url
        if url is None:
            served = stack.enter_context(serve_app(".load-server.log"))
            url, pid = served.url, served.proc.pid
        p = stack.enter_context(sync_playwright())
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        stack.callback(browser.close)
        open_app(browser.new_page(), url, "/")  # warm: the first run imports torch and plotly
        report["burst"] = sessions(browser, url, args.sessions, pid)
        print(json.dumps(report["burst"], indent=1), flush=True)
        if args.loads and pid:
            report["leak"] = leak_curve(browser, url, args.loads, pid)
            print(json.dumps(report["leak"], indent=1), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if report["burst"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
