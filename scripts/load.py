"""A class at once: N real browser sessions on one server, each on its own link, all changing a widget together.

usage: python scripts/load.py [--sessions 30] [--loads 200] [--url http://host:port] [--out FILE.json]

Without --url a `streamlit run` is started here (its CPU and memory are read from /proc); with --url
the sessions go to that address (e.g. nginx in front of deploy/replicas.sh) and only the browser-side
figures are reported. Each session opens its own Playground link (its own sentence and seed), then
every session's "Causal mask" is clicked at one moment (a timer armed in each page) and each session's
wait for the server's answer is read from Chromium's network timestamps; the time until all 30 have
drawn in this one browser (30 renderers on this machine's cores) is reported beside it.
Afterwards every page must still show its own tokens and seed (no cross-talk) and no exception box.
`--loads` then opens that many fresh sessions one after another and samples the server's memory, to
show whether it stays flat (a leak grows with the loads).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass

from attnlab.testing import (
    BROWSER_ARGS,
    SETTLED,
    cpu_seconds,
    finished,
    open_app,
    rerun,
    rss_bytes,
    serve_app,
    settle,
    watch,
)

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


CLICK_CAUSAL_AT = """target => setTimeout(() => [...document.querySelectorAll('[data-testid="stCheckbox"]')]
    .find(e => e.innerText.trim() === 'Causal mask').querySelector('input').click(), target - Date.now())"""


class Wire:
    """One tab's websocket traffic as Chromium's network service timestamps it (immune to a busy renderer)."""

    def __init__(self, tab) -> None:
        self.sent: list[float] = []
        self.finished: list[float] = []
        cdp = tab.context.new_cdp_session(tab)
        cdp.on("Network.webSocketFrameSent", lambda e: self.sent.append(e["timestamp"]))
        cdp.on("Network.webSocketFrameReceived", self._received)
        cdp.send("Network.enable")

    def _received(self, event: dict) -> None:
        frame = event["response"]
        if frame["opcode"] == 2 and finished(base64.b64decode(frame["payloadData"])):
            self.finished.append(event["timestamp"])

    def clear(self) -> None:
        self.sent.clear()
        self.finished.clear()


class CpuTrace:
    """The server's CPU time sampled every 20 ms in a thread: when did it finish the burst's work?"""

    def __init__(self, pid: int | None) -> None:
        self.pid, self.samples, self._stop = pid, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.time(), cpu_seconds(self.pid)))
            time.sleep(0.02)

    def __enter__(self) -> CpuTrace:
        if self.pid:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.pid:
            self._thread.join()

    def profile(self, since: float, step: float = 0.5) -> list[tuple[float, float]]:
        """(seconds after `since`, server CPU seconds used since then), every `step` seconds: where the work went."""
        start = next((c for t, c in self.samples if t >= since), None)
        out, mark = [], since
        for t, c in self.samples:
            if t >= mark:
                out.append((round(t - since, 2), round(c - start, 3)))
                mark += step
        return out

    def busy_until(self, since: float, busy_cpu_s: float = 0.03) -> float | None:
        """Seconds after `since` to the end of the last 100 ms in which the server used >= 30% of a core.

        Afterwards only a trickle remains (about 20 ms a second: websocket traffic of 30 open pages);
        /proc counts CPU in 10 ms ticks, so a lower threshold would mistake single ticks for work.
        """
        last = None
        for (t0, c0), (t1, c1) in zip(self.samples, self.samples[5:], strict=False):
            if t0 >= since and c1 - c0 >= busy_cpu_s:
                last = t1 - since
        return last


@dataclass(frozen=True)
class Burst:
    """What one burst measured (see `burst`)."""

    answered: list[float]  # per session: first click of the burst leaving a browser -> its script_finished arriving
    drawn: list[float]  # per session: the planned moment -> every chart drawn in this one browser
    click_spread: float  # first to last click leaving the browsers
    server_busy: float | None  # the planned moment -> the server's last busy 100 ms (None: no server pid here)
    server_profile: list[tuple[float, float]]  # (seconds after the moment, server CPU seconds since), every 0.5 s


def burst(tabs: list, wires: list[Wire], pid: int | None) -> Burst:
    """Every tab clicks its causal toggle at the same wall-clock moment (a timer armed in each page beforehand).

    `answered` is what a student on their own device waits for before drawing; `drawn` has all 30 tabs
    drawing on this one machine (the driver's own cost, which a real class spreads over 30 devices).
    """
    for wire in wires:
        wire.clear()
    moment = time.time() + 2.0 + 0.05 * len(tabs)  # time to arm every tab first
    for tab in tabs:
        tab.evaluate(CLICK_CAUSAL_AT, moment * 1000)
    drawn = []
    with CpuTrace(pid) as trace:
        for tab in tabs:
            tab.wait_for_function("() => location.search.includes('causal=true')", timeout=120_000)
            tab.wait_for_function(SETTLED, timeout=120_000)
            drawn.append(time.time() - moment)
    first_click = min(wire.sent[0] for wire in wires)
    answered = [wire.finished[0] - first_click for wire in wires]
    spread = max(wire.sent[0] for wire in wires) - first_click
    return Burst(answered, drawn, spread, trace.busy_until(moment), trace.profile(moment))


def settled_in_time(times: Burst, alone_s: float) -> bool:
    """Within the budget: the server done with every session, plus one student's own drawing of the answer.

    With a local server the server's CPU trace decides (the browsers' network timestamps are late when
    30 renderers share this machine's cores); through --url only the network timestamps are there.
    """
    done = times.server_busy if times.server_busy is not None else max(times.answered)
    return done + alone_s <= SETTLE_BUDGET_S


def no_exception(tab) -> bool:
    """No Streamlit exception box on the page."""
    return tab.locator('[data-testid="stException"]').count() == 0


def sessions(browser, url: str, n: int, pid: int | None) -> dict:
    """Open n sessions, measure the idle memory they cost, then the burst."""
    rss_before = rss_bytes(pid) if pid else None
    contexts, tabs, wires = [], [], []
    for i in range(n):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        wires.append(Wire(tab))
        open_app(tab, url, link(i))
        contexts.append(context)
        tabs.append(tab)
    rss_idle = rss_bytes(pid) if pid else None
    alone = []
    for _ in range(2):  # one student's change on an otherwise quiet server: the answer and its drawing
        start = time.perf_counter()
        rerun(tabs[0], lambda: tabs[0].get_by_text("Causal mask", exact=True).first.click())
        alone.append(time.perf_counter() - start)
    cpu0 = cpu_seconds(pid) if pid else None
    times = burst(tabs, wires, pid)
    cpu = cpu_seconds(pid) - cpu0 if pid else None
    crossed = [i for i, tab in enumerate(tabs) if not (f"student+{i}+" in tab.url and "causal=true" in tab.url)]
    shown = [i for i, tab in enumerate(tabs) if not own_state(tab, i)]
    errors = [i for i, tab in enumerate(tabs) if not no_exception(tab)]
    for context in contexts:
        context.close()
    per_session = (rss_idle - rss_before) / n if pid else None
    return {
        "sessions": n,
        "server_busy_until_s": times.server_busy,
        "server_cpu_after_the_moment": times.server_profile,
        "answered_p50_s": statistics.median(times.answered),
        "answered_max_s": max(times.answered),
        "settle_budget_s": SETTLE_BUDGET_S,
        "clicks_spread_s": times.click_spread,
        "one_change_alone_drawn_s": statistics.median(alone),
        "drawn_in_one_browser_p50_s": statistics.median(times.drawn),
        "drawn_in_one_browser_max_s": max(times.drawn),
        "server_cpu_s_for_the_burst": cpu,
        "server_rss_before_mib": rss_before / MIB if pid else None,
        "server_rss_idle_mib": rss_idle / MIB if pid else None,
        "idle_mib_per_session": per_session / MIB if pid else None,
        "sessions_with_wrong_link": crossed,
        "sessions_not_showing_own_tokens": shown,
        "sessions_with_exception": errors,
        "ok": settled_in_time(times, statistics.median(alone))
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
    ap.add_argument(
        "--clients-nice",
        type=int,
        default=19,
        help="niceness of this driver and its Chromium when the server runs here (a class's browsers run on "
        "their own devices, not on the server's cores); 0 lets 30 renderers compete with the server",
    )
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
            os.nice(args.clients_nice)  # the browsers start after this: they stand for 30 other devices
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
