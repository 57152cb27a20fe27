"""What one widget change costs a real `streamlit run` server: CPU time per change, bytes sent, AppTest beside it.

usage: python scripts/server_cost.py [--changes 20] [--pages playground,lessons...] [--no-orjson] [--out FILE.json]
         [--streamlit-arg --server.enableWebsocketCompression=true ...]

For each page a real server is driven by one headless Chromium session through N changes of one
widget; the server's CPU time (all threads, from /proc) is read before and after each change, which
settles on the app's own state. AppTest times the same change in-process (script run and element
serialisation only), so the difference is what the server spends outside the script.
`--no-orjson` hides orjson from the server (and AppTest) to measure what Plotly's faster JSON buys.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attnlab.testing import BROWSER_ARGS, ROOT, app_test, cpu_seconds, open_app, rerun, serve_app

LARGE_TEXT = "+".join(f"w{i}" for i in range(64))
MODERN = "rope=half&kv_heads=1&mask=window"  # contract 13's budget: RoPE, shared key/value heads and a window
NEURON_SETTINGS = "Playground settings (text, sizes, seed, mask)"  # the expander the Neuron view's controls sit in


@dataclass(frozen=True)
class Case:
    """One page at one setting, and the widget change that is repeated on it."""

    name: str
    path: str
    label: str  # the visible text of the toggle or button that is clicked, or the slider's label
    key: str  # the same widget's key, for AppTest
    opener: str | None = None  # text to click once first (an expander the widget sits in)
    slider: bool = False  # a slider, moved one step right then back by the keyboard, instead of a click
    button: bool = False  # a button (clicked by its text in the browser, by its key in AppTest), not a toggle


CASES = [
    Case("playground", "/?lang=en", "Causal mask", "lab.causal"),
    Case("playground 64/64/8", f"/?lang=en&text={LARGE_TEXT}&d_model=64&heads=8", "Causal mask", "lab.causal"),
    Case("playground modern", f"/?lang=en&{MODERN}", "Positions", "lab.pe"),  # the mask stays: the positions change
    Case("playground modern 4 heads", f"/?lang=en&heads=4&{MODERN}&kv_heads=2&alibi=true", "Positions", "lab.pe"),
    Case(
        "playground modern 64/64/8",
        f"/?lang=en&text={LARGE_TEXT}&d_model=64&heads=8&{MODERN}&kv_heads=2&alibi=true",
        "Positions",
        "lab.pe",
    ),
    Case("multihead", "/multihead?lang=en", "Causal mask", "lab.causal"),
    Case("cross", "/cross?lang=en", "Causal decoder", "cross.causal"),
    Case("neuron", "/neuron?lang=en&q=1", "Causal mask", "lab.causal", opener=NEURON_SETTINGS),
    Case("scaling", "/scaling?lang=en", "Divide by √d_k", "lscale.scaled"),
    Case("positions", "/positions?lang=en", "Add positional encodings", "lpos.pe"),
    Case("rope", "/rope?lang=en", "Shift every position by", "lrope.shift", slider=True),
    Case("soft dictionary", "/soft-dictionary?lang=en", "Temperature τ", "ldict.temp", slider=True),
    Case("tiled", "/tiled?lang=en", "Causal mask", "tiled.causal"),
    Case("lm", "/lm?lang=en", "Temperature", "lm.temperature", slider=True),  # its fragment: the top ten, generation
    Case(
        "benchmark",
        "/benchmark?lang=en",
        "Sliding window: FlexAttention against a dense mask",
        "bench.study.window",
        button=True,
    ),
]


def no_orjson_env() -> tuple[dict[str, str], str]:
    """An environment whose Python cannot import orjson (a stub that raises), and the stub's folder."""
    folder = tempfile.mkdtemp(prefix="no-orjson-")
    Path(folder, "orjson.py").write_text("raise ImportError('hidden by scripts/server_cost.py')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([folder, os.environ.get("PYTHONPATH", "")]).strip(os.pathsep))
    return env, folder


@contextlib.contextmanager
def profiled(pid: int, out: str | None):
    """py-spy sampling the server (all threads, idle time left out) while the block runs; collapsed stacks to `out`."""
    if not out:
        yield
        return
    command = ["py-spy", "record", "--pid", str(pid), "--rate", "250", "--format", "raw", "--output", out]
    spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # py-spy attaches before the first change
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)


def browser_cost(case: Case, url: str, pid: int, browser, changes: int, profile: str | None = None) -> dict:
    """Server CPU ms and websocket bytes per change, over `changes` clicks in one session."""
    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    received: list[int] = []
    tab.on("websocket", lambda ws: ws.on("framereceived", lambda frame: received.append(len(frame))))
    open_app(tab, url, case.path)
    if case.opener:
        tab.get_by_text(case.opener, exact=True).first.click()
    with profiled(pid, profile):
        return changes_cost(case, tab, pid, changes, received)


def changes_cost(case: Case, tab, pid: int, changes: int, received: list[int]) -> dict:
    """Click the case's widget `changes` times, reading the server's CPU clock around each."""
    cpu_ms, sent = [], []
    for i in range(changes):
        received.clear()
        before = cpu_seconds(pid)
        rerun(tab, change(case, tab, i))
        cpu_ms.append((cpu_seconds(pid) - before) * 1000)
        sent.append(sum(received))
    tab.close()
    return {"server_cpu_ms": summary(cpu_ms), "bytes_per_change": statistics.median(sent)}


def change(case: Case, tab, i: int) -> Callable[[], None]:
    """What the i-th change does in the browser: click the toggle, or move the slider a step right (even i) or back."""
    if not case.slider:
        return tab.get_by_text(case.label, exact=True).first.click
    thumb = tab.get_by_role("slider", name=case.label).first
    return lambda: thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")


def apptest_cost(case: Case, changes: int) -> dict:
    """The same change timed by AppTest in this process: wall and CPU ms of at.run()."""
    query = dict(pair.split("=", 1) for pair in case.path.split("?", 1)[1].split("&"))
    query = {k: v.replace("+", " ") for k, v in query.items()}
    at = app_test(120)
    at.query_params.update(query)
    at.run()
    page = case.path.split("?")[0].strip("/")
    if page:
        from attnlab.ui.app.registry import PAGES

        at.switch_page(next(s.path for s in PAGES if s.url_path == page)).run()
    wall, cpu = [], []
    start = at.slider(key=case.key).value if case.slider else None
    for i in range(changes):
        if case.slider:
            widget = at.slider(key=case.key)
            widget.set_value(start + widget.proto.step if i % 2 == 0 else start)
        elif case.button:
            at.button(key=case.key).click()
        else:
            at.toggle(key=case.key).set_value(i % 2 == 0)
        t0, c0 = time.perf_counter(), time.process_time()
        at.run()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return {"apptest_wall_ms": summary(wall), "apptest_cpu_ms": summary(cpu)}


def summary(values: list[float]) -> dict:
    """Median and p90 of a list of milliseconds."""
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))], "n": len(ordered)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--pages", default="", help="comma list of case names (default: all)")
    ap.add_argument("--no-orjson", action="store_true")
    ap.add_argument("--no-apptest", action="store_true")
    ap.add_argument(
        "--streamlit-arg", action="append", default=[], help="e.g. --server.enableWebsocketCompression=true"
    )
    ap.add_argument("--profile", help="collapsed py-spy stacks of the first page's changes to this file")
    ap.add_argument("--root", type=Path, default=ROOT, help="serve another checkout (implies --no-apptest)")
    ap.add_argument("--out")
    args = ap.parse_args()
    args.no_apptest = args.no_apptest or args.root != ROOT
    from playwright.sync_api import sync_playwright

    chosen = [c for c in CASES if not args.pages or c.name in args.pages.split(",")]
    env, stub = no_orjson_env() if args.no_orjson else (None, None)
    if stub:
        sys.path.insert(0, stub)  # AppTest runs in this process: hide orjson here too
        sys.modules.pop("orjson", None)
    report: dict = {"orjson": not args.no_orjson, "streamlit_args": args.streamlit_arg, "cases": {}}
    report["machine"] = {"cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}
    with serve_app(".server-cost.log", *args.streamlit_arg, env=env, root=args.root) as served, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        warm = browser.new_page()
        open_app(warm, served.url, "/")  # the first script run imports everything: not part of a change
        warm.close()
        for i, case in enumerate(chosen):
            profile = args.profile if i == 0 else None
            row = browser_cost(case, served.url, served.proc.pid, browser, args.changes, profile)
            if not args.no_apptest:
                row |= apptest_cost(case, args.changes)
            report["cases"][case.name] = row
            cpu = row["server_cpu_ms"]
            line = f"{case.name:<22} server CPU {cpu['median']:7.1f} ms (p90 {cpu['p90']:.1f})"
            line += f"  sent {row['bytes_per_change'] / 1024:8.1f} KB"
            if "apptest_cpu_ms" in row:
                line += f"  AppTest CPU {row['apptest_cpu_ms']['median']:6.1f} ms"
            print(line, flush=True)
        browser.close()
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
