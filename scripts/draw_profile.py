"""Where the largest settings' draw time goes in the browser: per chart its Plotly draws, paints, SVG text nodes.

usage: python scripts/draw_profile.py [--runs 5] [--pages playground,cross,multihead] [--root DIR ...] [--cpu]
       [--trace DIR] [--busy N] [--phone]

Each visit opens the page's link in a fresh browser context on a warm server and waits on the app's own state
(`attnlab.testing.settle`), as scripts/budgets.py does. It reports the seconds from the link to every chart drawn;
CPU seconds of the page's main thread and renderer (Chrome's ThreadTime, ProcessTime) and of the server (/proc),
which a busy machine moves less than wall time; the whole machine's CPU seconds over the visit (every process:
the browser's renderer, GPU and network processes, the server), less the spinners' below, which is what the visit
takes from other work on a shared machine; Chrome's wall time in tasks, scripts, layout and style; how many
heatmap traces Plotly painted (it paints each on a canvas and reads it back: a hook on `toDataURL` counts them)
against how many there are; and per chart how many times Plotly finished drawing it (its `plotly_afterplot`
events, counted by a hook on the chart's `emit`), its traces and SVG text nodes. Several `--root` checkouts (a
`git archive` of another commit, say) are served side by side and visited in turn, so their figures are taken in
the same minutes on the same machine; each is the median over `--runs` visits. `--cpu` adds one visit per page
with a CPU profile summed by Plotly module; `--trace DIR` writes a Chrome performance trace per page and checkout.
`--busy N` keeps N other processes spinning on the CPU while the visits are timed (after the servers are warm), as
other work keeps a class server busy; N = 2 keeps both cores of a 2-core machine busy. `--phone` visits as a
mid-range phone (`attnlab.testing.PHONE`: 390 x 844, its CPU slowed 4 times); a page named outside PAGES is its
registry URL path, opened at its default link.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import contextlib
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from attnlab.testing import BROWSER_ARGS, PHONE, PHONE_CPU_SLOWDOWN, ROOT, cpu_seconds, serve_app, settle

BIG = "+".join(f"w{i}" for i in range(64))
PAGES = {  # the largest settings each of these pages allows (DESIGN: every setting draws within 8 s)
    "playground": f"/?text={BIG}&d_model=64&heads=64&causal=true",
    "cross": f"/cross?src={BIG}&tgt={BIG}&d_model=64&heads=64",
    "multihead": f"/multihead?text={BIG}&d_model=64&heads=64&causal=true",
    "playground-default": "/",
    "cross-default": "/cross",
    "multihead-default": "/multihead",
}

# Plotly gives each chart's div an `emit` (Events.init assigns it); a setter on the prototype wraps it as it is
# assigned, so every event the chart emits is seen without touching Plotly or Streamlit.
HOOK = """
window.__draws = [];
window.__paints = 0;  // heatmap traces painted: Plotly paints each one's cells on a canvas, then reads it back
const toDataURL = HTMLCanvasElement.prototype.toDataURL;
HTMLCanvasElement.prototype.toDataURL = function () {
  window.__paints += 1;
  return toDataURL.apply(this, arguments);
};
Object.defineProperty(HTMLElement.prototype, 'emit', {
  configurable: true,
  get() { return undefined; },
  set(fn) {
    Object.defineProperty(this, 'emit', {
      configurable: true, writable: true,
      value: function (name, data) {
        if (name === 'plotly_afterplot') window.__draws.push({ t: performance.now(), gd: this });
        return fn.apply(this, arguments);
      },
    });
  },
});
"""

CHARTS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].map(chart => {
    const draws = window.__draws.filter(d => chart.contains(d.gd));
    const gd = chart.querySelector('.js-plotly-plot');
    return {
        draws: draws.length,
        heatmaps: gd && gd.data ? gd.data.filter(trace => trace.type === 'heatmap').length : 0,
        last_ms: draws.length ? Math.max(...draws.map(d => d.t)) : null,
        traces: gd && gd.data ? gd.data.length : 0,
        text_nodes: chart.querySelectorAll('svg text').length,
    };
})"""

# ThreadTime and ProcessTime are CPU time (the page's main thread, its renderer): on a busy machine wall time measures
# the other work as much as ours, CPU time does not; the Durations are wall time spent in tasks, scripts, layout
METRICS = ("ThreadTime", "ProcessTime", "TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


def machine_cpu_s() -> float:
    """CPU seconds every process on the machine has used so far (the busy fields of /proc/stat's first line)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def visit(
    browser,
    url: str,
    trace: Path | None = None,
    cpu: bool = False,
    server_pid: int | None = None,
    spinners: tuple[int, ...] = (),
    phone: bool = False,
) -> dict:
    """One visit in a fresh context: seconds to settled, CPU and main-thread seconds, and every chart's counts."""
    context = browser.new_context(**(PHONE if phone else {"viewport": {"width": 1400, "height": 1000}}))
    context.add_init_script(HOOK)
    tab = context.new_page()
    cdp = context.new_cdp_session(tab)
    cdp.send("Performance.enable")
    if phone:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": PHONE_CPU_SLOWDOWN})
    if cpu:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        cdp.send("Profiler.start")
    if trace is not None:
        browser.start_tracing(page=tab, path=str(trace), screenshots=False)
    server0 = cpu_seconds(server_pid) if server_pid else 0.0
    machine0 = machine_cpu_s() - sum(cpu_seconds(pid) for pid in spinners)
    start = time.perf_counter()
    tab.goto(url)
    settle(tab, timeout=120_000)
    seconds = time.perf_counter() - start
    machine_s = machine_cpu_s() - sum(cpu_seconds(pid) for pid in spinners) - machine0
    server_s = cpu_seconds(server_pid) - server0 if server_pid else 0.0
    if trace is not None:
        browser.stop_tracing()
    profile = cdp.send("Profiler.stop")["profile"] if cpu else None
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    charts = tab.evaluate(CHARTS)
    paints = tab.evaluate("window.__paints")
    assert tab.locator('[data-testid="stException"]').count() == 0, url
    context.close()
    return {
        "settled_s": seconds,
        "server_cpu_s": server_s,
        "machine_cpu_s": machine_s,
        "main_thread_s": {name: metrics[name] for name in METRICS},
        "charts": charts,
        "draws": sum(c["draws"] for c in charts),
        "heatmaps": sum(c["heatmaps"] for c in charts),
        "paints": paints,
        "text_nodes": sum(c["text_nodes"] for c in charts),
        "cpu_by_module_s": None if profile is None else by_module(profile),
    }


@functools.cache
def _modules(url: str) -> tuple[list[int], list[int], list[str]]:
    """A bundle's line offsets, and where each module of it starts (`"src/traces/heatmap/plot.js"(e,t){`)."""
    import streamlit

    name = url.rsplit("/", 1)[-1]
    path = Path(streamlit.__file__).parent / "static" / "static" / "js" / name
    text = path.read_text() if name.endswith(".js") and path.exists() else ""
    lines = [0] + [m.end() for m in re.finditer("\n", text)]
    found = [(m.start(), m.group(1)) for m in re.finditer(r'"((?:src|lib|node_modules)/[^"]+\.js)"\(', text)]
    return lines, [at for at, _ in found], [module for _, module in found]


def module_of(frame: dict) -> str:
    """Which module of Streamlit's bundles a profiled function is in: Plotly's own module path where it has one."""
    url = frame["url"]
    if not url:
        return frame["functionName"] or "(native)"
    lines, starts, names = _modules(url)
    if starts:
        at = lines[frame["lineNumber"]] + frame["columnNumber"]
        i = bisect.bisect_right(starts, at) - 1
        if i >= 0:
            return names[i]
    return url.rsplit("/", 1)[-1].split(".")[0]


def by_module(profile: dict) -> dict[str, float]:
    """Self time per module of a CPU profile (seconds), the largest first."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    totals: dict[str, float] = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        totals[module_of(nodes[sample]["callFrame"])] += delta / 1e6
    return {name: round(s, 3) for name, s in sorted(totals.items(), key=lambda kv: -kv[1])[:25] if s >= 0.02}


@contextlib.contextmanager
def _spinning():
    """One other process that keeps a core busy until the block ends; yields its pid."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def summary(visits: list[dict]) -> dict:
    """Medians over the visits, and the counts of the last one (they do not vary between visits)."""
    last = visits[-1]
    return {
        "settled_s_median": round(statistics.median(v["settled_s"] for v in visits), 2),
        "settled_s_all": [round(v["settled_s"], 2) for v in visits],
        "main_thread_cpu_s_all": [round(v["main_thread_s"]["ThreadTime"], 2) for v in visits],
        "server_cpu_s_median": round(statistics.median(v["server_cpu_s"] for v in visits), 2),
        "machine_cpu_s_median": round(statistics.median(v["machine_cpu_s"] for v in visits), 2),
        "machine_cpu_s_all": [round(v["machine_cpu_s"], 2) for v in visits],
        "main_thread_s_median": {
            name: round(statistics.median(v["main_thread_s"][name] for v in visits), 2) for name in METRICS
        },
        "charts": len(last["charts"]),
        "draws": last["draws"],
        "heatmaps": last["heatmaps"],
        "paints": last["paints"],
        "text_nodes": last["text_nodes"],
        "per_chart draws/traces/text nodes": " ".join(
            f"{c['draws']}/{c['traces']}/{c['text_nodes']}" for c in last["charts"]
        ),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pages", default="playground,cross,multihead")
    ap.add_argument("--root", action="append", type=Path, help="a checkout to serve (repeat to compare)")
    ap.add_argument("--trace", type=Path, default=None)
    ap.add_argument("--cpu", action="store_true", help="one more visit per page with a CPU profile, by module")
    ap.add_argument("--busy", type=int, default=0, help="processes kept spinning while the visits are timed")
    ap.add_argument("--phone", action="store_true", help="visit as a mid-range phone: 390 x 844, CPU 4x slower")
    args = ap.parse_args()
    roots = args.root or [ROOT]
    pages = args.pages.split(",")
    link = {name: PAGES.get(name, f"/{name}") for name in pages}
    phone = functools.partial(visit, phone=args.phone)
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack, sync_playwright() as p:
        servers = [stack.enter_context(serve_app(f".draw-profile-{i}.log", root=r)) for i, r in enumerate(roots)]
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        for served in servers:  # warm each server: imports, the first pipeline run, every page once
            for name in pages:
                phone(browser, served.url + link[name])
        visits: dict = {(r, name): [] for r in range(len(roots)) for name in pages}
        spinners = tuple(stack.enter_context(_spinning()) for _ in range(args.busy))
        for _ in range(args.runs):
            for name in pages:
                for r, served in enumerate(servers):
                    visits[r, name].append(
                        phone(browser, served.url + link[name], server_pid=served.proc.pid, spinners=spinners)
                    )
        if args.trace is not None:
            args.trace.mkdir(parents=True, exist_ok=True)
            for r, served in enumerate(servers):
                for name in pages:
                    phone(browser, served.url + link[name], args.trace / f"{name}-{r}.json")
        cpu = {}
        if args.cpu:
            for r, served in enumerate(servers):
                for name in pages:
                    cpu[r, name] = phone(browser, served.url + link[name], cpu=True)["cpu_by_module_s"]
        browser.close()
    report = {
        str(root): {
            name: summary(visits[r, name]) | ({"cpu_by_module_s": cpu[r, name]} if cpu else {}) for name in pages
        }
        for r, root in enumerate(roots)
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
