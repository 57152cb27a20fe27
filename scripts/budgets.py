"""Measure the budgets in ARCHITECTURE.md: rerun latency and bytes, cold start, session memory, draw time, real model.

usage: python scripts/budgets.py [--reruns 30] [--sessions 10] [--out budgets.json]
Rerun latency is measured in-process with Streamlit's AppTest (the script run plus the
serialisation of every element). The rest needs Debian's Chromium (/usr/bin/chromium) and a
real `streamlit run`: cold start, bytes of one rerun, server memory per idle session, the real
model's first load and its rerun at 32 tokens (server CPU from /proc), and the time from opening
each page at the largest setting it allows to every chart drawn.
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

from attnlab.testing import BROWSER_ARGS, app_test, cpu_seconds, open_app, rerun, rss_bytes, serve_app, settle

LARGE_TEXT = " ".join(f"w{i}" for i in range(64))
MODERN = {"rope": "half", "kv_heads": "1", "mask": "window"}  # contract 13: RoPE, shared key/value heads, a window
SETTINGS = {
    "default": {},
    "64 tokens, d_model 64, 8 heads": {"text": LARGE_TEXT, "d_model": "64", "heads": "8"},
    "default, RoPE, 1 key/value head, window 3": MODERN,
    "default, 4 heads, 2 K/V heads, RoPE, ALiBi, window 3": {**MODERN, "heads": "4", "kv_heads": "2", "alibi": "1"},
    "64 tokens, d_model 64, 8 heads, 2 K/V heads, RoPE, ALiBi, window 3": {
        **MODERN,
        "text": LARGE_TEXT,
        "d_model": "64",
        "heads": "8",
        "kv_heads": "2",
        "alibi": "1",
    },
}
BIG = "text=" + "+".join(f"w{i}" for i in range(64))
LONG_SENTENCE = "+".join(
    ["the", "student", "reads", "about", "attention", "and", "writes", "notes"] * 20
)  # > 128 pieces
LARGEST = {  # the heaviest setting each page allows (DESIGN: every setting a page allows draws within 8 s)
    "Playground 64 tokens, d_model 64, 8 heads": f"/?{BIG}&d_model=64&heads=8",
    "Playground 64 tokens, d_model 64, 64 heads": f"/?{BIG}&d_model=64&heads=64",
    "Playground 64 tokens, 64 heads, 8 K/V heads, RoPE, ALiBi, sinks": (
        f"/?{BIG}&d_model=64&heads=64&kv_heads=8&rope=interleaved&alibi=true&mask=sinks"
    ),
    "Presenter step 5, 64 tokens": f"/present?{BIG}&d_model=64&heads=8&step=5",
    "Multi-head 64 tokens, 64 heads": f"/multihead?{BIG}&d_model=64&heads=64",
    "Cross-attention 64 x 64 tokens, 64 heads": f"/cross?src={BIG[5:]}&tgt={BIG[5:]}&d_model=64&heads=64",
    "Neuron view 64 tokens, 64 heads": f"/neuron?{BIG}&d_model=64&heads=64&q=63",
    "Real model, model view, 128 tokens": f"/real-model?text={LONG_SENTENCE}&view=model",
    "Real model, every stage, 128 tokens": f"/real-model?text={LONG_SENTENCE}&view=stages&layer=6&head=12",
    "Real model, rollout, 128 tokens": f"/real-model?text={LONG_SENTENCE}&view=rollout",
    "Language model, 255 characters": "/lm?lang=zh&text=" + "寥落古行宫" * 51,
    "Language model, 64 characters generated": "/lm?lang=en&gen=64&temperature=1&seed=3",
    "Positions 256 positions, 128 dims": "/positions?n_pos=256&pe_d=128&d_model=64",
    "RoPE d 256, distance 131072, shift 131072": "/rope?d=256&pos=4096&shift=131072&dist=131072",
    "Scaling d_k 512, 64 keys": "/scaling?dk=512&keys=64",
    "Tiled 12 tokens, blocks of 1": "/tiled?T=12&d=8&bq=1&bk=1",
}


def rerun_ms(query: dict[str, str], reruns: int) -> dict[str, float]:
    """Median and p90 of a Playground rerun (server side), after one warm-up run."""
    at = app_test(120)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    times = []
    switch = "lab.pe" if "mask" in query else "lab.causal"  # the causal switch would take a rule's mask away
    for i in range(reruns):
        at.toggle(key=switch).set_value(i % 2 == 0)  # a real widget change each time
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"median_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))]}


def browser_budgets(n_sessions: int) -> dict:
    """Cold start, bytes of a rerun, memory per session, the real model's budgets, draw time at largest settings."""
    from playwright.sync_api import sync_playwright

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
                tab.get_by_text("Positions" if "mask" in query else "Causal mask", exact=True).click()
                tab.wait_for_timeout(500)
                settle(tab)
                out[f"rerun_bytes[{name}]"] = sum(received)

            base = rss_bytes(served.proc.pid)  # one session already open and warm
            for _ in range(n_sessions):
                extra = browser.new_context().new_page()
                extra.goto(url + "/")
                settle(extra)
            time.sleep(2)
            after = rss_bytes(served.proc.pid)
            out["server_rss_before_mb"] = base / 2**20
            out["server_rss_after_mb"] = after / 2**20
            out["mb_per_idle_session"] = (after - base) / n_sessions / 2**20
            out["real_model"] = real_model_budget(browser, served, changes=5)
            out["draw_s_at_largest_settings"] = draw_times(browser, url)
        browser.close()
    return out


def draw_times(browser, url: str) -> dict[str, dict[str, float]]:
    """Seconds from opening each page at its largest setting to every chart drawn: first visit, then again."""
    out = {}
    for name, path in LARGEST.items():
        seconds = []
        for _ in range(2):
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            start = time.perf_counter()
            tab.goto(url + path)
            settle(tab, timeout=120_000)
            seconds.append(time.perf_counter() - start)
            assert tab.locator('[data-testid="stException"]').count() == 0, name
            tab.close()
        out[name] = {"first_s": seconds[0], "again_s": seconds[1]}
    return out


def sentence(i: int, words: int = 30) -> str:
    """A plain English sentence of `words` words (32 WordPiece tokens with [CLS] and [SEP]), different per i."""
    pool = "the a student teacher reads writes about attention model heads layer token every word sees other".split()
    return " ".join(pool[(i * 7 + j * 3) % len(pool)] for j in range(words))


def real_model_budget(browser, served, changes: int) -> dict:
    """The model's first load (time and server memory) and a Real model rerun at 32 tokens (server CPU, wall)."""
    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    open_app(tab, served.url, "/lessons")
    before = rss_bytes(served.proc.pid)
    start = time.perf_counter()
    open_app(tab, served.url, "/real-model?view=head&text=" + sentence(0).replace(" ", "+"))
    first = time.perf_counter() - start
    loaded = rss_bytes(served.proc.pid)
    box = tab.locator('[data-testid="stTextInput"] input').first
    cpu, wall = [], []
    for i in range(1, changes + 1):

        def change(i: int = i) -> None:
            box.fill(sentence(i))
            box.press("Enter")

        c0, t0 = cpu_seconds(served.proc.pid), time.perf_counter()
        rerun(tab, change)
        wall.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds(served.proc.pid) - c0)
    tab.close()
    return {
        "first_open_with_model_load_s": first,
        "server_rss_growth_on_first_open_mib": (loaded - before) / 2**20,
        "rerun_32_tokens_server_cpu_ms_median": statistics.median(cpu) * 1000,
        "rerun_32_tokens_wall_ms_median": statistics.median(wall) * 1000,
    }


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
