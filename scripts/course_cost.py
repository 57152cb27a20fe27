"""What the course's task panel adds to a page's rerun (budget: <= 20 ms): timed in a real server and inside the run.

usage: python scripts/course_cost.py [--changes 20] [--pages playground,scaling,...] [--no-browser] [--out FILE.json]

For each page a widget is changed N times in two sessions of one real `streamlit run` server, one with the page's
task open and its answer typed (so the panel grades it on every rerun) and one without, the changes alternating
between the two so that the machine's other work falls on both alike; the server's CPU time (every thread, from
/proc) is read around each change, and the difference of the means is what the panel adds. AppTest then runs the
same changes in this process with the panel's own functions (`courselink.follow`, `taskpanel.slot`, `taskpanel.fill`)
timed inside the run: their CPU per rerun, a change that moves the task's answer included.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from attnlab.testing import BROWSER_ARGS, app_test, cpu_seconds, open_app, rerun, serve_app


@dataclass(frozen=True)
class Case:
    """One page, the widget changed on it (its label in the browser, its key in AppTest) and the task open there."""

    name: str
    path: str  # the page's URL path
    task: str
    label: str
    key: str
    slider: bool = False
    link: dict[str, str] = field(default_factory=dict)  # the task's own starting link, if any
    typed: str = ""  # a text box instead: the i-th change types this text less its last i characters (each new)


CASES = [
    Case("playground", "/", "playground-causal", "Causal mask", "lab.causal", link={"text": "I like you"}),
    Case("multihead", "/multihead", "multihead-dk", "Causal mask", "lab.causal"),
    Case("scaling", "/scaling", "scaling-unscaled", "Divide by √d_k", "lscale.scaled"),
    Case("soft dictionary", "/soft-dictionary", "dict-temperature", "Temperature τ", "ldict.temp", slider=True),
    Case("rope", "/rope", "rope-angle", "Position p", "lrope.pos", slider=True),
    Case("lm", "/lm", "lm-probability", "Text", "lm.text", typed="In the beginning God created the heaven and the ear"),
]


def url(case: Case, task: bool) -> str:
    """The page's link, with its task (and the task's starting link) or without."""
    query = {"lang": "en", **case.link, **({"task": case.task} if task else {})}
    return f"{case.path}?{urllib.parse.urlencode(query)}"


def text_of(case: Case, i: int) -> str:
    """The text of a text case's i-th change: a new one each time, so that the task's answer is computed anew."""
    return case.typed[: len(case.typed) - 1 - i]


def change(case: Case, tab, i: int) -> Callable[[], None]:
    """The i-th change in the browser: click the toggle, move the slider a step right (even i) or back, or type."""
    if case.typed:
        box = tab.get_by_label(case.label, exact=True).first
        return lambda: (box.fill(text_of(case, i)), box.press("Control+Enter"))
    if not case.slider:
        return tab.get_by_text(case.label, exact=True).first.click
    thumb = tab.get_by_role("slider", name=case.label).first
    return lambda: thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")


def answered(case: Case, tab) -> None:
    """Type the task's answer for the page as it stands, so that every rerun grades it (and shows the verdict)."""
    from attnlab import course

    task = course.by_id()[case.task]
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(tab.url).query))
    box = tab.locator(".st-key-course_answer input")
    rerun(tab, lambda: (box.fill(task.expected(query)), box.press("Enter")))


def browser_cost(case: Case, served, browser, changes: int) -> dict:
    """Server CPU ms per change with the task open and without, the changes alternating between the two tabs."""
    tabs = {}
    for task in (False, True):
        tabs[task] = browser.new_page(viewport={"width": 1280, "height": 720})
        open_app(tabs[task], served.url, url(case, task))
    answered(case, tabs[True])
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for i in range(changes):
        for task in (False, True) if i % 2 == 0 else (True, False):
            before = cpu_seconds(served.proc.pid)
            rerun(tabs[task], change(case, tabs[task], i))
            cpu[task].append((cpu_seconds(served.proc.pid) - before) * 1000)
    for tab in tabs.values():
        tab.close()
    out = {("with_task" if task else "without"): summary(values) for task, values in cpu.items()}
    out["added_ms"] = out["with_task"]["mean"] - out["without"]["mean"]
    return out


@contextlib.contextmanager
def panel_clock() -> Iterator[list[float]]:
    """The CPU the panel's own functions take in each run (appended per run), timed where the router calls them."""
    from attnlab.ui.app import courselink, taskpanel

    spent: list[float] = []
    originals = {(courselink, "follow"), (taskpanel, "slot"), (taskpanel, "fill")}
    saved = {(module, name): getattr(module, name) for module, name in originals}

    def timed(function: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent.append((time.process_time() - start) * 1000)

        return wrapper

    for (module, name), function in saved.items():
        setattr(module, name, timed(function))
    try:
        yield spent
    finally:
        for (module, name), function in saved.items():
            setattr(module, name, function)


def apptest_cost(case: Case, changes: int) -> dict:
    """The panel's own CPU per rerun inside AppTest, over the same changes with the task open and its answer typed."""
    from attnlab import course
    from attnlab.ui.app.registry import PAGES

    task = course.by_id()[case.task]
    spec = next(s for s in PAGES if s.url_path == task.page)
    at = app_test(120, url_path=spec.url_path)
    at.query_params.update({"lang": "en", "task": task.id, **task.link})
    at.run()
    at.text_input(key="course_answer").input(task.expected(dict(at.query_params))).run()
    start = at.slider(key=case.key).value if case.slider else None
    per_run = []
    with panel_clock() as spent:
        for i in range(changes):
            if case.typed:
                at.text_area(key=case.key).input(text_of(case, i))
            elif case.slider:
                widget = at.slider(key=case.key)
                widget.set_value(start + widget.proto.step if i % 2 == 0 else start)
            else:
                at.toggle(key=case.key).set_value(i % 2 == 0)
            spent.clear()
            at.run()
            per_run.append(sum(spent))
    return {"panel_cpu_ms": summary(per_run)}


def summary(values: list[float]) -> dict:
    """Mean, median and p90 of a list of milliseconds (the mean: /proc counts in 10 ms ticks)."""
    ordered = sorted(values)
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "n": len(ordered),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--pages", default="", help="comma list of case names (default: all)")
    ap.add_argument("--no-browser", action="store_true", help="only the panel's own CPU, inside AppTest")
    ap.add_argument("--out")
    args = ap.parse_args()
    chosen = [c for c in CASES if not args.pages or c.name in args.pages.split(",")]
    report: dict = {"machine": {"cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M")}, "cases": {}}
    for case in chosen:
        report["cases"][case.name] = apptest_cost(case, args.changes)
    if not args.no_browser:
        from playwright.sync_api import sync_playwright

        with serve_app(".course-cost.log") as served, sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
            warm = browser.new_page()
            open_app(warm, served.url, "/")  # the first script run imports everything: not part of a change
            warm.close()
            for case in chosen:
                report["cases"][case.name] |= browser_cost(case, served, browser, args.changes)
            browser.close()
    for name, row in report["cases"].items():
        panel = row["panel_cpu_ms"]
        line = f"{name:<16} panel's own CPU {panel['mean']:5.1f} ms"
        line += f" (median {panel['median']:.1f}, p90 {panel['p90']:.1f})"
        if "added_ms" in row:
            line += f"  server CPU per change: {row['without']['mean']:6.1f} ms without, "
            line += f"{row['with_task']['mean']:6.1f} ms with the task: {row['added_ms']:+5.1f} ms"
        print(line, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
