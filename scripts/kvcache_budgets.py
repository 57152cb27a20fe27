"""Measure contract 14's budgets: the KV-cache page's rerun (<= 100 ms of server CPU) and a generation step with a
window cache (<= 5 ms).

usage: python scripts/kvcache_budgets.py [--changes 20] [--repeats 30] [--symbols 40] [--no-server]

The page: a real `streamlit run` server, one headless Chromium session on /kv-cache, a click on the number-format
buttons (bf16, fp8 and back) repeated; the server's CPU time (all threads, /proc) is read around each change, as
scripts/server_cost.py does. AppTest times the same change in-process beside it. The step: one token fed on top of
a window cache filled with the prompt (window 8, 1 sink, as the decoder page's stepper computes it), beside the same
step with the whole cache. Medians and p90 in milliseconds; the machine's load is printed, since a shared CPU slows
every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

FORMATS = ("fp8", "bf16")  # the buttons clicked in turn
LABELS = {"fp8": "fp8 · 1 B", "bf16": "bf16 · 2 B"}  # their English labels (kvcache.format)


def summary(ms: list[float]) -> dict[str, float]:
    """Median and p90 of milliseconds."""
    ordered = sorted(ms)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
    }


@torch.no_grad()
def step_ms(symbols: int, repeats: int, window: int | None, sinks: int) -> list[float]:
    """Milliseconds per step of the 2-layer decoder: the last token fed on a cache filled with the rest."""
    from attnlab.trained import load
    from attnlab.trained.model import KVCache
    from attnlab.ui.pages.decoder.numbers import random_repeating

    dec = load("induction-2l")
    ids = dec.ids(random_repeating(dec.vocab, 7, symbols, 0))
    out = []
    for _ in range(repeats + 1):  # the first round warms up and is dropped
        cache = KVCache(window=window, sinks=sinks)
        dec.model(ids[None, :-1], cache=cache)
        start = time.perf_counter()
        dec.model(ids[None, -1:], cache=cache)
        out.append((time.perf_counter() - start) * 1e3)
    return out[1:]


def server_ms(changes: int) -> list[float]:
    """Server CPU milliseconds per click on the number-format buttons of /kv-cache, in a real server."""
    from playwright.sync_api import sync_playwright

    from attnlab.testing import BROWSER_ARGS, cpu_seconds, open_app, rerun, serve_app

    with serve_app(".kvcache-budgets.log") as served, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        warm = browser.new_page()
        open_app(warm, served.url, "/")  # the first script run imports everything: not part of a change
        warm.close()
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_app(tab, served.url, "/kv-cache?lang=en")
        out = []
        for i in range(changes):
            button = tab.get_by_text(LABELS[FORMATS[i % 2]], exact=True).first
            before = cpu_seconds(served.proc.pid)
            rerun(tab, button.click)
            out.append((cpu_seconds(served.proc.pid) - before) * 1e3)
        browser.close()
    return out


def apptest_ms(changes: int) -> list[float]:
    """The same change timed by AppTest in this process: CPU milliseconds of at.run()."""
    from attnlab.testing import app_test

    at = app_test(120, url_path="kv-cache")
    at.query_params.update(lang="en")
    at.run()
    out = []
    for i in range(changes):
        at.button_group(key="kv.bytes").set_value(FORMATS[i % 2])
        start = time.process_time()
        at.run()
        out.append((time.process_time() - start) * 1e3)
    return out


def main() -> None:
    """Print both budgets as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--symbols", type=int, default=40)
    ap.add_argument("--no-server", action="store_true", help="skip the real server (the step and AppTest only)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    report: dict = {"cpus": os.cpu_count(), "load_average_before": os.getloadavg()[0]}
    report["step_window_8_sinks_1"] = {**summary(step_ms(args.symbols, args.repeats, 8, 1)), "budget_ms": 5}
    report["step_whole_cache"] = summary(step_ms(args.symbols, args.repeats, None, 0))
    report["page_apptest_cpu"] = summary(apptest_ms(args.changes))
    if not args.no_server:
        report["page_server_cpu"] = {**summary(server_ms(args.changes)), "budget_ms": 100}
    report["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
