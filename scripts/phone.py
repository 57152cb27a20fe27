"""Every page on a mid-range phone: its first and last chart against a one-chart Streamlit page, in one run.

usage: python -m scripts.phone [--runs 3] [--pages multihead,benchmark...] [--langs en,zh] [--root DIR ...]
       [--desktop] [--floor-every 4] [--idle 3] [--out phone.json]

Each registered page's default link (`/<url_path>` from the registry; the Playground's is `/`) is opened on a warm
`streamlit run` server in a fresh browser context, a new visitor on a phone as Lighthouse's mobile profile has it
(`attnlab.testing.PHONE`: 390 x 844 CSS pixels at 1.75 device pixels each, touch, a phone's user agent, so the app
builds a first visit's figures for a phone's width as a real phone gets them), the page's CPU slowed 4 times (CDP
`Emulation.setCPUThrottlingRate`). A script in the page stamps the first painted frame with a chart drawn, and the
frame from which every chart the page ends with is drawn; the visit ends when the page has settled by its own state
(`attnlab.testing.settle`, then the width probe's report and `settle` again: its first screen has asked for the rest
and drawn it, no rerun is due), so no figure races the first screen. The main thread's CPU seconds are read when the
first chart shows (polled) and when the page has settled: on a machine other work keeps busy they move far less than
wall time, which also counts the server's and the other work's turns on the cores.

The floor is a one-chart Streamlit page, a single 64 x 64 heatmap and a title, served by this script with attnlab's
server settings and timed the same way in the same run, every `--floor-every` pages and after each language; each
page's figure is its median over `--runs` visits against the floor's median, per language, printed as the issue's
table (issue 61: first chart within 1.5x, every chart within 2.0x). `--root` serves other checkouts (a `git archive`
of main, say) beside each other; each page is visited on each in turn, the order alternating, so before and after are
measured in the same minutes, and each later checkout is printed against the first visit by visit as well (`paired`).
`--desktop` times the largest settings (Cross-attention 64 x 64 tokens and Multi-head 64 tokens, d_model 64, 64 heads)
at 1280 x 720, not throttled (within 1.6x). Before the timed visits every link is opened once per language, unthrottled;
the server's resident memory is read before that and after each, so the total after every page once and the growth each
page's first visit brought are printed (`--runs 0`: only that). `--idle N` then opens N more visitors of each link in
the first language and keeps them all open: what each idle session holds on the server, read as the resident memory's
growth while that link's N opened (none closed, so none's freed memory is reused by the next), against DESIGN's 20 MB;
the server's garbage from earlier visits, collected meanwhile, moves it by a few MB either way (below 0 for a session
that holds next to nothing). A failed visit is counted, not fatal. A benchmark, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from attnlab.testing import (
    BROWSER_ARGS,
    PATIENCE_MS,
    PHONE,
    PHONE_CPU_SLOWDOWN,
    ROOT,
    SETTLED,
    rss_bytes,
    serve_app,
    settle,
)
from attnlab.ui.app.registry import PAGES
from scripts.load import IDLE_SESSION_BUDGET, MIB

DESKTOP = {"viewport": {"width": 1280, "height": 720}}
BIG = "+".join(f"w{i}" for i in range(64))
LARGEST = {  # the desktop check: the heaviest settings of the pages that draw the most cells
    "cross-64": f"/cross?src={BIG}&tgt={BIG}&d_model=64&heads=64",
    "multihead-64": f"/multihead?text={BIG}&d_model=64&heads=64",
}
GOALS = {"first": 1.5, "all": 2.0, "desktop": 1.6}  # DESIGN's budgets: times the one-chart page
IDLE_SESSION_MB = IDLE_SESSION_BUDGET / MIB  # DESIGN: one idle session costs <= 20 MB (scripts/load.py checks it too)

ONE_CHART = '''"""One 64 x 64 heatmap and a title, nothing else: Streamlit's own floor for a page with a chart."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.title("One chart")
z = np.random.default_rng(0).random((64, 64))
st.plotly_chart(go.Figure(go.Heatmap(z=z)), width="stretch")
'''

# Stamped in the page on each animation frame (before it is painted): when the first chart shows, and every change
# in how many charts are drawn. Playwright's own waits poll and run late on a busy main thread.
STAMPS = """
window.__phone = { first: null, changes: [] };
const shows = svg => svg.getBoundingClientRect().height > 0 && getComputedStyle(svg).visibility === 'visible';
const tick = () => {
  const now = performance.now();  // ms since this navigation started
  const s = window.__phone;
  const svgs = document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg:first-of-type');
  const drawn = [...svgs].filter(shows).length;
  const last = s.changes.length ? s.changes[s.changes.length - 1][1] : 0;
  if (drawn !== last) s.changes.push([now, drawn]);
  if (s.first === null && drawn) s.first = now;
  requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
"""
POLL_MS = 50  # how often the main thread's CPU time is read until the first chart shows
BAND_MEASURED = "() => document.body.dataset.attnlabBand !== undefined"  # attnlab's width probe has reported


def one_chart_app(where: Path) -> Path:
    """A folder holding the one-chart page as app.py, with attnlab's own server settings."""
    (where / "app.py").write_text(ONE_CHART, encoding="utf-8")
    shutil.copytree(ROOT / ".streamlit", where / ".streamlit")
    return where


def default_links() -> dict[str, str]:
    """Every registered page's default link, by its URL path (the first page's is the app's own address, /)."""
    return {spec.url_path: "/" if spec is PAGES[0] else f"/{spec.url_path}" for spec in PAGES}


def with_lang(link: str, lang: str) -> str:
    return f"{link}{'&' if '?' in link else '?'}lang={lang}"


def visit(browser, url: str, device: dict, slowdown: float, attnlab: bool) -> dict:
    """One new visitor: seconds to the first chart drawn and to every chart drawn, the count, main-thread CPU."""
    context = browser.new_context(**device)
    context.set_default_timeout(PATIENCE_MS)
    context.add_init_script(STAMPS)
    tab = context.new_page()
    cdp = context.new_cdp_session(tab)
    cdp.send("Performance.enable")
    if slowdown > 1:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    tab.goto(url)
    first_cpu = cpu_at_first_chart(tab, cdp)
    settle(tab)
    if attnlab:  # its width probe has measured the column, and a rerun that asked for has drawn
        tab.wait_for_function(BAND_MEASURED)
        tab.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        settle(tab)
    tab.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    stamps = tab.evaluate("window.__phone")
    charts = tab.locator('[data-testid="stPlotlyChart"]').count()
    errors = tab.locator('[data-testid="stException"]').count()
    band = tab.evaluate("() => document.body.dataset.attnlabBand || null")
    all_cpu = thread_s(cdp)
    context.close()
    changes = stamps["changes"]
    final = changes[-1][1] if changes else 0
    since = next((i for i in range(len(changes) - 1, -1, -1) if changes[i][1] < final), -1)  # last time short of it
    return {
        "first_s": stamps["first"] / 1000 if stamps["first"] is not None else None,
        "all_s": changes[since + 1][0] / 1000 if final else None,
        "charts": charts,
        "errors": errors,
        "band": band,
        "first_cpu_s": first_cpu,
        "main_thread_cpu_s": all_cpu,
    }


def thread_s(cdp) -> float:
    """CPU seconds the page's main thread has run so far (Chrome's ThreadTime)."""
    return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "ThreadTime")


def cpu_at_first_chart(tab, cdp) -> float | None:
    """The main thread's CPU seconds when the first chart showed (None for a page that settles without one), polled:
    read just after the frame that showed it, so at most a poll's worth of work late. Steadier than wall time on a
    machine other work keeps busy, which delays the browser and its server as much as what the page asks of them."""
    tab.wait_for_function(f"() => window.__phone.first !== null || ({SETTLED})()", polling=POLL_MS)
    return thread_s(cdp) if tab.evaluate("window.__phone.first !== null") else None


def median(values: list[float | None]) -> float | None:
    """The median of the values measured (None where none was)."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def timed(browser, url: str, device: dict, slowdown: float, attnlab: bool, label: str) -> dict:
    """`visit`, printed as it ends; a visit that fails (a page that never settles) is recorded as failed, not fatal."""
    try:
        row = visit(browser, url, device, slowdown, attnlab)
    except Exception as exc:  # a long run goes on past one bad visit; the table counts it
        row = {"failed": f"{type(exc).__name__}: {str(exc)[:200]}"}
    print(f"{label}: {brief(row)}", file=sys.stderr, flush=True)
    return row


def brief(row: dict) -> str:
    """One visit in a line."""
    if "failed" in row:
        return f"failed ({row['failed']})"
    first, last, cpu = row["first_s"] or 0, row["all_s"] or 0, row["main_thread_cpu_s"] or 0
    seen = f"first {first:.2f} s, all {last:.2f} s, {row['charts']} charts, band {row['band']}"
    return seen + f", main thread {row['first_cpu_s'] or 0:.2f} s CPU to the first chart, {cpu:.2f} s to settled"


@contextlib.contextmanager
def servers(roots: list[Path]):
    """A server per checkout (its own attnlab first on the path) and one for the floor page; yields (url, pid)s."""
    with contextlib.ExitStack() as stack:
        floor_root = one_chart_app(Path(stack.enter_context(tempfile.TemporaryDirectory())))
        floor = stack.enter_context(serve_app(".phone-floor.log", root=floor_root))
        served = []
        for i, root in enumerate(roots):
            env = {**os.environ, "PYTHONPATH": str(root)}
            served.append(stack.enter_context(serve_app(f".phone-{i}.log", env=env, root=root)))
        yield (floor.url, floor.proc.pid), [(s.url, s.proc.pid) for s in served]


def warm(browser, url: str, pid: int, links: dict[str, str], langs: list[str], device: dict) -> dict:
    """Every link once per language, unthrottled: imports, models and caches loaded. RSS before and after each."""
    memory = {"idle_mb": rss_bytes(pid) / 2**20, "after": {}}
    for lang in langs:
        for name, link in links.items():
            visit(browser, url + with_lang(link, lang), device, 1, attnlab=True)
            memory["after"][f"{name} {lang}"] = rss_bytes(pid) / 2**20
    return memory


def idle_cost(browser, url: str, pid: int, links: dict[str, str], lang: str, device: dict, n: int) -> dict[str, float]:
    """MB each of `n` open sessions of each link holds on the server; every context stays open until all are read."""
    contexts, cost = [], {}
    try:
        for name, link in links.items():
            before = rss_bytes(pid)
            for _ in range(n):
                contexts.append(browser.new_context(**device))
                tab = contexts[-1].new_page()
                tab.goto(url + with_lang(link, lang))
                settle(tab)
            cost[f"{name} {lang}"] = (rss_bytes(pid) - before) / n / 2**20
    finally:
        for context in contexts:
            context.close()
    return cost


def measure(args, links: dict[str, str], device: dict, slowdown: float) -> dict:
    """Warm every server, then visit each link on each checkout in turn, the floor between, `runs` times."""
    from playwright.sync_api import sync_playwright

    roots = [str(r.resolve()) for r in args.root] if args.root else [str(ROOT)]
    visits: dict = {r: {lang: {name: [] for name in links} for lang in args.langs} for r in roots}
    floors: dict = {lang: [] for lang in args.langs}
    with servers(list(map(Path, roots))) as (floor, served), sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        visit(browser, floor[0], device, 1, attnlab=False)
        memory = {r: warm(browser, *where, links, args.langs, device) for r, where in zip(roots, served, strict=True)}

        def one(url: str, attnlab: bool, label: str) -> dict:
            return timed(browser, url, device, slowdown, attnlab, label)

        for run in range(1, args.runs + 1):
            for lang in args.langs:
                for i, (name, link) in enumerate(links.items()):
                    if i % args.floor_every == 0:
                        floors[lang].append(one(floor[0], False, f"run {run} {lang} floor"))
                    for k in range(len(roots)) if (run + i) % 2 else reversed(range(len(roots))):  # in turn
                        row = one(served[k][0] + with_lang(link, lang), True, f"run {run} {lang} {name} {roots[k]}")
                        visits[roots[k]][lang][name].append(row)
                floors[lang].append(one(floor[0], False, f"run {run} {lang} floor"))
        for r, (url, pid) in zip(roots, served, strict=True):
            memory[r]["after_runs_mb"] = rss_bytes(pid) / 2**20
            if args.idle:
                memory[r]["idle_session_mb"] = idle_cost(browser, url, pid, links, args.langs[0], device, args.idle)
        browser.close()
    return {"visits": visits, "floors": floors, "memory": memory}


def ratios(rows: list[dict], floor: dict[str, float]) -> dict[str, float | None]:
    """A page's medians against the floor's (seconds to the first chart and to every chart, the main thread's CPU
    seconds to each); failed visits left out, and counted."""
    done = [r for r in rows if ok(r)]
    out: dict = {"failed": len(rows) - len(done)}
    for name, field in FIELDS.items():
        got = median([r[field] for r in done])
        out[name] = got / floor[name] if got is not None else None
    return out


FIELDS = {"first": "first_s", "all": "all_s", "cpu_first": "first_cpu_s", "cpu_all": "main_thread_cpu_s"}


def table(visits: dict, floors: dict, langs: list[str], goals: tuple[float, float]) -> list[str]:
    """The issue's table for one checkout: charts, and first / all as ratios to the floor, per language; then the same
    in the main thread's CPU seconds (steadier than wall time on a machine other work keeps busy)."""
    floor = {}
    for lang in langs:
        done = [f for f in floors[lang] if ok(f)]
        floor[lang] = {name: median([f[field] for f in done]) for name, field in FIELDS.items()}
    head = "| page | charts | " + " | ".join(f"{lang}: first / all" for lang in langs)
    head += " | " + " | ".join(f"CPU {lang}: first / all" for lang in langs) + " |"
    lines = [head, "| --- | --- |" + " --- |" * (2 * len(langs))]
    for name in next(iter(visits.values())):
        charts = sorted({r["charts"] for lang in langs for r in visits[lang][name] if ok(r)})
        wall, cpu = [], []
        for lang in langs:
            got = ratios(visits[lang][name], floor[lang])
            if got["first"] is None:
                wall.append("failed" if got["failed"] else "no chart")
                cpu.append(f"- / {got['cpu_all']:.2f}×" if got["cpu_all"] is not None else "-")
                continue
            over = got["first"] > goals[0] or got["all"] > goals[1]
            failed = f" ({got['failed']} failed)" if got["failed"] else ""
            wall.append(f"{got['first']:.2f}× / {got['all']:.2f}×" + (" (over)" if over else "") + failed)
            cpu.append(f"{got['cpu_first']:.2f}× / {got['cpu_all']:.2f}×")
        lines.append(f"| {name} | {'/'.join(map(str, charts))} | " + " | ".join(wall + cpu) + " |")
    said = ", ".join(f"{lang} {floor[lang]['first']:.2f} s ({floor[lang]['cpu_all']:.2f} s CPU)" for lang in langs)
    lines.append(f"floor (a one-chart Streamlit page, one 64 x 64 heatmap): {said}")
    return lines


def paired(base: dict, other: dict, langs: list[str]) -> list[str]:
    """`other` checkout against `base`, visit by visit: for each page and language, the median over runs of the ratio
    of its visit to `base`'s in the same turn (the same run, page and language, taken one right after the other), with
    the lowest and highest; a turn with a failed visit is left out. On a machine whose speed drifts during a run (the
    floor's own visits took 7.0 to 13.2 s in one phone run) both visits of a turn share the drift, so these ratios
    say more about a change than the two tables' medians do."""
    head = "| page | " + " | ".join(f"{lang}: first / all / CPU" for lang in langs) + " | turns |"
    lines = [head, "| --- |" + " --- |" * len(langs) + " --- |"]
    for name in base[langs[0]]:
        cells, turns = [], []
        for lang in langs:
            pairs = [(b, o) for b, o in zip(base[lang][name], other[lang][name], strict=True) if ok(b) and ok(o)]
            turns.append(len(pairs))
            cells.append(" / ".join(spread([o[f] / b[f] for b, o in pairs if b[f] and o[f]]) for f in PAIRED))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {'/'.join(map(str, turns))} |")
    return lines


PAIRED = tuple(FIELDS[name] for name in ("first", "all", "cpu_all"))  # what `paired` compares


def ok(row: dict) -> bool:
    """A visit that did not fail."""
    return "failed" not in row


def spread(values: list[float]) -> str:
    """'0.94 (0.80-1.02)': the median and the range, or '-' for none."""
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def memory_lines(memory: dict) -> list[str]:
    """The server's resident memory: idle, after every link once per language, after the timed visits; and the
    links whose first visit grew it most (a model loaded, a cache filled)."""
    after = memory["after"]
    steps = list(after.values())
    growth = {k: v - w for (k, v), w in zip(after.items(), [memory["idle_mb"], *steps[:-1]], strict=True)}
    most = sorted(growth.items(), key=lambda kv: -kv[1])[:8]
    return [
        f"server memory: {memory['idle_mb']:.0f} MB idle, {steps[-1]:.0f} MB after every page once per language, "
        f"{memory['after_runs_mb']:.0f} MB after the timed visits",
        "  grew most on the first visit of: " + ", ".join(f"{k} +{v:.0f} MB" for k, v in most),
    ] + idle_lines(memory.get("idle_session_mb"))


def idle_lines(cost: dict[str, float] | None) -> list[str]:
    """What one idle session of each link holds (`--idle`), the largest first, against DESIGN's 20 MB."""
    if not cost:
        return []
    worst = sorted(cost.items(), key=lambda kv: -kv[1])
    over = [k for k, v in worst if v > IDLE_SESSION_MB]
    verdict = f"over {IDLE_SESSION_MB:.0f} MB: {', '.join(over)}" if over else f"all within {IDLE_SESSION_MB:.0f} MB"
    return [
        "one idle session holds: " + ", ".join(f"{k} {v:.1f} MB" for k, v in worst[:8]) + f" ({verdict})",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed visits of each page (0: only the server's memory)")
    ap.add_argument("--pages", default="", help="comma list of URL paths ('playground' for /), default: every page")
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--root", action="append", type=Path, help="a checkout to serve (repeat to compare)")
    ap.add_argument("--desktop", action="store_true", help="the largest settings at 1280 x 720, not throttled")
    ap.add_argument("--floor-every", type=int, default=4, help="a floor visit before every this many pages")
    ap.add_argument("--idle", type=int, default=0, help="then keep this many sessions of each link open: MB each")
    ap.add_argument("--out", help="also write every visit, the floors and the memory to this JSON file")
    args = ap.parse_args()
    args.langs = args.langs.split(",")
    links = LARGEST if args.desktop else default_links()
    if args.pages:
        links = {name: link for name, link in links.items() if name in args.pages.split(",")}
    device, slowdown = (DESKTOP, 1) if args.desktop else (PHONE, PHONE_CPU_SLOWDOWN)
    goals = (GOALS["desktop"], GOALS["desktop"]) if args.desktop else (GOALS["first"], GOALS["all"])
    report = measure(args, links, device, slowdown)
    kind = "desktop 1280 x 720" if args.desktop else f"phone 390 x 844, CPU {PHONE_CPU_SLOWDOWN}x slower"
    for root, visits in report["visits"].items():
        if args.runs:
            print(f"\n{root} ({kind}; medians of {args.runs} visits against the floor's, in one run):")
            print("\n".join(table(visits, report["floors"], args.langs, goals)))
        print("\n".join(memory_lines(report["memory"][root])))
    base, *others = report["visits"]
    for root in others if args.runs else []:
        print(f"\n{root} against {base}, visit by visit in the same turn (the turns' median ratio, lowest-highest):")
        print("\n".join(paired(report["visits"][base], report["visits"][root], args.langs)))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
