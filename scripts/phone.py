"""Every page on a mid-range phone: its first and last chart against a one-chart Streamlit page, in one run.

usage: python -m scripts.phone [--runs 3] [--pages multihead,benchmark...] [--langs en,zh] [--root DIR ...]
       [--desktop] [--floor-every 4] [--out phone.json]

Each registered page's default link (`/<url_path>` from the registry) is opened on a warm `streamlit run` server in a
fresh browser context emulating a phone as Lighthouse's mobile profile does: 390 x 844 CSS pixels at 1.75 device
pixels per pixel, touch, a phone's user agent (so the app builds its first figures for a phone's width, as a real
phone's first visit gets them) and the page's CPU slowed 4 times (CDP `Emulation.setCPUThrottlingRate`). A script
in the page stamps the first painted frame with a chart drawn, and the frame from which every chart the page ends
with is drawn; the visit ends when the page has settled by its own state (`attnlab.testing.settle`: its first screen
has asked for the rest and drawn it, its width is measured, no rerun is due), so no figure races the first screen.
The floor is a one-chart page, a single 64 x 64 heatmap served by this script with attnlab's server settings, timed
the same way in the same run, every `--floor-every` pages; each page's ratio is its median over `--runs` against the
floor's median, per language. `--root` serves other checkouts (a `git archive` of main, say) beside each other; each
page is visited on each in turn, so before and after are measured in the same minutes. `--desktop` times the largest
settings (Cross-attention 64 x 64 tokens and Multi-head 64 tokens at d_model 64 with 64 heads) at 1280 x 720 without
throttling instead. The server's resident memory is read before any visit and after each page's first (warm-up)
visit, so the growth each page brings is printed with the total. A benchmark, not a test: nothing here asserts.
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

from attnlab.testing import BROWSER_ARGS, PATIENCE_MS, PHONE, PHONE_CPU_SLOWDOWN, ROOT, rss_bytes, serve_app, settle
from attnlab.ui.app.registry import PAGES

DESKTOP = {"viewport": {"width": 1280, "height": 720}}
BIG = "+".join(f"w{i}" for i in range(64))
LARGEST = {  # the desktop check: the heaviest settings of the pages that draw the most cells
    "cross-64": f"/cross?src={BIG}&tgt={BIG}&d_model=64&heads=64",
    "multihead-64": f"/multihead?text={BIG}&d_model=64&heads=64",
}
GOALS = {"first": 1.5, "all": 2.0, "desktop": 1.6}  # DESIGN's budgets: times the one-chart page

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
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
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
        "main_thread_cpu_s": metrics.get("ThreadTime"),
    }


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
    return f"first {first:.2f} s, all {last:.2f} s, {row['charts']} charts, band {row['band']}, main thread {cpu:.2f} s"


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
        for r, (_, pid) in zip(roots, served, strict=True):
            memory[r]["after_runs_mb"] = rss_bytes(pid) / 2**20
        browser.close()
    return {"visits": visits, "floors": floors, "memory": memory}


def ratios(rows: list[dict], floor_s: float, cpu_floor_s: float) -> dict[str, float | None]:
    """A page's medians against the floor's: first chart, every chart, main-thread CPU; failed visits left out."""
    done = [r for r in rows if "failed" not in r]
    first, last = median([r["first_s"] for r in done]), median([r["all_s"] for r in done])
    cpu = median([r["main_thread_cpu_s"] for r in done])
    return {
        "first": first / floor_s if first is not None else None,
        "all": last / floor_s if last is not None else None,
        "cpu": cpu / cpu_floor_s if cpu is not None else None,
        "failed": len(rows) - len(done),
    }


def table(visits: dict, floors: dict, langs: list[str], goals: tuple[float, float]) -> list[str]:
    """The issue's table for one checkout: charts, and first / all as ratios to the floor, per language; then the
    main thread's CPU time to the page settled against the floor's (steadier than wall time on a busy machine)."""
    done = {lang: [f for f in floors[lang] if "failed" not in f] for lang in langs}
    floor_s = {lang: median([f["first_s"] for f in done[lang]]) for lang in langs}
    cpu_s = {lang: median([f["main_thread_cpu_s"] for f in done[lang]]) for lang in langs}
    head = "| page | charts | " + " | ".join(f"{lang}: first / all" for lang in langs)
    lines = [head + " | main-thread CPU " + " / ".join(langs) + " |", "| --- | --- |" + " --- |" * (len(langs) + 1)]
    for name in next(iter(visits.values())):
        charts = sorted({r["charts"] for lang in langs for r in visits[lang][name] if "failed" not in r})
        cells, cpu = [], []
        for lang in langs:
            got = ratios(visits[lang][name], floor_s[lang], cpu_s[lang])
            cpu.append(f"{got['cpu']:.2f}×" if got["cpu"] is not None else "-")
            if got["first"] is None:
                cells.append("no chart" if not got["failed"] else "failed")
                continue
            over = got["first"] > goals[0] or got["all"] > goals[1]
            cells.append(
                f"{got['first']:.2f}× / {got['all']:.2f}×"
                + (" (over)" if over else "")
                + (f" ({got['failed']} failed)" if got["failed"] else "")
            )
        row = f"| {name} | {'/'.join(map(str, charts))} | " + " | ".join(cells) + f" | {' / '.join(cpu)} |"
        lines.append(row)
    floors_said = ", ".join(f"{lang} {floor_s[lang]:.2f} s" for lang in langs)
    lines.append(f"floor (a one-chart Streamlit page, one 64 x 64 heatmap): {floors_said}")
    return lines


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
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pages", default="", help="comma list of URL paths ('playground' for /), default: every page")
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--root", action="append", type=Path, help="a checkout to serve (repeat to compare)")
    ap.add_argument("--desktop", action="store_true", help="the largest settings at 1280 x 720, not throttled")
    ap.add_argument("--floor-every", type=int, default=4, help="a floor visit before every this many pages")
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
        print(f"\n{root} ({kind}; medians of {args.runs} visits against the floor's, in one run):")
        print("\n".join(table(visits, report["floors"], args.langs, goals)))
        print("\n".join(memory_lines(report["memory"][root])))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
