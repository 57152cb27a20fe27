"""Measure the Language model page's budgets on a real `streamlit run` server, driven by headless Chromium (issue 53).

usage: python scripts/lm_budgets.py [--model zh] [--lang zh] [--changes 12] [--steps 12] [--branches 8] [--out FILE]

- a rerun after a text change at 128 characters: the server's CPU per change (budget 300 ms), a new text each time
  (128-character windows of the held-out passage, so every change reads a text the server has not read);
- what the logit lens and the attribution add to that rerun (contract 19, budget 60 ms): a second tab with both open
  changes to other new windows, the two tabs taking turns, so both see the same load; the added cost is the
  difference of the medians (and of the means);
- a branch of three continuations of 32 characters (budget 300 ms): the server's CPU for the rerun after the branch
  box changes (a new prefix each time) with only the branches open, and `LanguageModel.branches` timed in this
  process beside three `generate` calls (CPU medians on one torch thread);
- a generation step: the server's CPU per press of "Next character" (budget 50 ms; the fragment reruns);
- the model is loaded once per process: its load time and the memory it adds, measured here, and a second
  visitor's first run on the warm server (no load in it);
- the first chart against the other pages: `python scripts/cold_start.py --path "/lm?lang=zh"`.
`--model` may be a folder; it is then offered to the server through ATTNLAB_LM_MODELS. A benchmark: nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

from attnlab.testing import BROWSER_ARGS, cpu_seconds, open_app, rerun, rss_bytes, serve_app

BUDGET_MS = {"text_change": 300, "generation_step": 50, "lens_and_attribution_added": 60, "branch_of_three": 300}
TEXT_CHARS = 128
BRANCH_CHARS = 32
TEMPS = [0.0, 0.7, 1.2]


def summary(values: list[float]) -> dict:
    """Median and p90 of a list of milliseconds."""
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))], "n": len(ordered)}


def texts(lang: str, n: int) -> list[str]:
    """n different 128-character windows of the held-out passage (line breaks as spaces: one line each)."""
    from attnlab.lmlab.texts import held_out

    body = held_out(lang).replace("\n", " ")
    step = max(1, (len(body) - TEXT_CHARS) // max(1, n))
    return [body[i * step : i * step + TEXT_CHARS] for i in range(n)]


def branch_cost(model: str, lang: str, repeats: int) -> dict:
    """Three continuations of 32 characters after a 128-character text: one batched `branches` call against three
    `generate` calls, each the median of `repeats`, side by side in this process, in CPU ms on one torch thread (a
    busy machine stretches the wall clock, not the work)."""
    import torch

    from attnlab import lm

    torch.set_num_threads(1)
    model_ = lm.load(model)
    text = texts(lang, 1)[0]
    model_.branches(text, 4, TEMPS)  # first-use costs out of the timing
    batched, alone = [], []
    for seed in range(repeats):
        t0 = time.process_time()
        model_.branches(text, BRANCH_CHARS, TEMPS, seed)
        batched.append((time.process_time() - t0) * 1000)
        t0 = time.process_time()
        for temperature in TEMPS:
            model_.generate(text, BRANCH_CHARS, temperature, seed)
        alone.append((time.process_time() - t0) * 1000)
    return {"branches_batched_ms": summary(batched), "three_generates_ms": summary(alone)}


def server_ms(pid: int, tab, action) -> float:
    """The server's CPU for the run one action starts, in ms."""
    before = cpu_seconds(pid)
    rerun(tab, action)
    return (cpu_seconds(pid) - before) * 1000


def load_cost(model: str) -> dict:
    """Two loads of the model here: the first in this process (with torch's own first-use costs) and a second one
    (the model's own), each in seconds and the resident memory it adds."""
    from attnlab import lm  # torch and the package imported first: only the loads are timed

    out = {}
    for name in ("first", "again"):
        before, t0 = rss_bytes(os.getpid()), time.perf_counter()
        lm.load(model)
        out[f"load_{name}_s"] = time.perf_counter() - t0
        out[f"load_{name}_mb"] = (rss_bytes(os.getpid()) - before) / 2**20
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="zh")
    ap.add_argument("--lang", default=None, help="the page's language and the texts' (default: the model's, or zh)")
    ap.add_argument("--changes", type=int, default=12)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--branches", type=int, default=8)
    ap.add_argument("--out")
    args = ap.parse_args()
    lang = args.lang or (args.model if args.model in ("zh", "en") else "zh")
    from playwright.sync_api import sync_playwright

    env = dict(os.environ)
    if args.model not in ("zh", "en"):
        env["ATTNLAB_LM_MODELS"] = args.model
    report: dict = {"model": args.model, "lang": lang, "machine": {"cpus": os.cpu_count(), "date": time.strftime("%F")}}
    report |= load_cost(args.model)
    report |= branch_cost(args.model, lang, args.branches)
    path = f"/lm?lang={lang}&model={quote(args.model, safe='')}"
    with serve_app(".lm-budgets.log", env=env) as served, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        pid = served.proc.pid
        first = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_app(first, served.url, path)  # the first visitor: imports, the model loaded, the sink experiment run
        second = browser.new_page(viewport={"width": 1400, "height": 1000})
        before = cpu_seconds(pid)
        open_app(second, served.url, path)
        report["second_visitor_first_run_ms"] = (cpu_seconds(pid) - before) * 1000
        box = second.locator("textarea").first
        changes = []
        for text in texts(lang, args.changes):
            box.fill(text)
            changes.append(server_ms(pid, second, lambda: box.press("Control+Enter")))
        report["text_change_cpu_ms"] = summary(changes)
        button = second.get_by_role("button", name="下一个字" if lang == "zh" else "Next character")
        steps = [server_ms(pid, second, button.click) for _ in range(args.steps)]
        report["generation_step_cpu_ms"] = summary(steps)
        print(json.dumps(report), flush=True)  # so far: what a later failure would lose
        report |= sections_cost(browser, served.url, path, pid, lang, args.changes, args.branches)
        report["server_rss_mb"] = rss_bytes(pid) / 2**20
        browser.close()
    report["budget_ms"] = BUDGET_MS
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


def sections_cost(browser, url: str, path: str, pid: int, lang: str, changes: int, branches: int) -> dict:
    """Contract 19's sections on the server: text changes with the lens and the attribution closed and open, taking
    turns (each on a window no tab has read), and branch changes with the branches open."""
    closed, opened = (browser.new_page(viewport={"width": 1400, "height": 1000}) for _ in range(2))
    open_app(closed, url, path + "&open=")
    open_app(opened, url, path + "&open=lens,attribution")
    windows = texts(lang, 2 * changes + 2)[2:]  # none of the windows the plain text changes read
    cost: dict[str, list[float]] = {"closed": [], "open": []}
    for i in range(changes):
        for name, tab, text in (("closed", closed, windows[2 * i]), ("open", opened, windows[2 * i + 1])):
            box = tab.locator("textarea").first
            box.fill(text)
            cost[name].append(server_ms(pid, tab, lambda box=box: box.press("Control+Enter")))
    out = {f"text_change_{name}_cpu_ms": summary(values) for name, values in cost.items()}
    out["lens_and_attribution_added_ms"] = {
        "median": out["text_change_open_cpu_ms"]["median"] - out["text_change_closed_cpu_ms"]["median"],
        "mean": statistics.mean(cost["open"]) - statistics.mean(cost["closed"]),
    }
    print(json.dumps(out), flush=True)
    branched = browser.new_page(viewport={"width": 1400, "height": 1000})
    open_app(branched, url, path + "&open=branches")
    box = branched.locator(".st-key-lm-branch input")
    marks = "天地人山水风花雪月日" if lang == "zh" else "abcdefghijklmnop"
    per_change = []
    for i in range(branches):
        box.fill(marks[i % len(marks)] * (1 + i // len(marks)))
        per_change.append(server_ms(pid, branched, lambda: box.press("Enter")))
    out["branch_change_cpu_ms"] = summary(per_change)
    return out


if __name__ == "__main__":
    sys.exit(main())
