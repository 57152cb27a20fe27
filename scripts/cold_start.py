"""Time the first chart: attnlab against a one-chart Streamlit page, cold and for a second visitor, in one run.

usage: python scripts/cold_start.py [--runs 3] [--path /] [--out cold_start.json]

Both apps go through the same harness (headless Chromium already running, `attnlab.testing.serve_app`):
cold is from `streamlit run` being started to the first Plotly chart drawn in a fresh tab; the second
visitor opens a new browser context on the server that is still running. Runs alternate between the two
apps so a busy machine slows both alike; medians are printed with the spread of each, and the gaps
against the goals (cold within 1.5 s of the one-chart page, a second visitor within 1.0 s). A benchmark,
not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from attnlab.testing import BROWSER_ARGS, ROOT, serve_app

FIRST_CHART = '[data-testid="stPlotlyChart"] .main-svg'
GOALS_S = {"cold": 1.5, "second": 1.0}  # how much later than the one-chart page attnlab may draw its first chart
ONE_CHART = '''"""One chart, nothing else: the floor for the time to a first chart in this harness."""

import plotly.graph_objects as go
import streamlit as st

st.title("One chart")
st.plotly_chart(go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])), width="stretch")
'''


def one_chart_app(where: Path) -> Path:
    """A folder holding the one-chart page as app.py, with attnlab's own server settings."""
    (where / "app.py").write_text(ONE_CHART, encoding="utf-8")
    shutil.copytree(ROOT / ".streamlit", where / ".streamlit")
    return where


# Stamped in the page, on the first painted frame where each thing shows: Playwright's own waits poll at up to
# 500 ms intervals and run late when the page's main thread is busy, which would blur the figure being measured.
STAMPS = (
    f"const CHART = {json.dumps(FIRST_CHART)};"
    + """
window.__stamps = {};
const stamp = () => {
  const now = performance.now();  // ms since this navigation started
  const s = window.__stamps;
  if (s.title === undefined && document.querySelector('h1')) s.title = now;
  if (s.chart === undefined) {
    const svg = document.querySelector(CHART);
    if (svg && svg.getBoundingClientRect().height > 0 && getComputedStyle(svg).visibility === 'visible') s.chart = now;
  }
  if (s.chart === undefined || s.title === undefined) requestAnimationFrame(stamp);
};
requestAnimationFrame(stamp);
"""
)


def first_chart(browser, url: str) -> dict[str, float]:
    """Open `url` in a new browser context: seconds to the first painted heading and chart, bytes received."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.add_init_script(STAMPS)
    frames: list[int] = []
    tab.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(len(f))))
    tab.goto(url)
    tab.wait_for_function("window.__stamps.chart !== undefined && window.__stamps.title !== undefined", timeout=120_000)
    stamps = tab.evaluate("window.__stamps")
    charts = tab.locator('[data-testid="stPlotlyChart"]').count()
    context.close()
    return {
        "title_s": stamps["title"] / 1000,
        "chart_s": stamps["chart"] / 1000,
        "ws_bytes": sum(frames),
        "charts_so_far": charts,
    }


def one_round(browser, name: str, root: Path, path: str) -> dict[str, float]:
    """One cold start of an app (server started now) and one second visitor on the same server."""
    start = time.perf_counter()
    with serve_app(f".cold-start-{name}.log", root=root) as served:
        healthy = time.perf_counter() - start
        first = first_chart(browser, served.url + path)
        second = first_chart(browser, served.url + path)
    return {
        "cold_s": healthy + first["chart_s"],
        "cold_healthy_s": healthy,
        "cold_title_s": healthy + first["title_s"],
        "cold_ws_bytes": first["ws_bytes"],
        "second_s": second["chart_s"],
        "second_title_s": second["title_s"],
        "second_ws_bytes": second["ws_bytes"],
    }


def summary(rounds: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Median, min and max of every measured field."""
    return {
        key: {
            "median": statistics.median(r[key] for r in rounds),
            "min": min(r[key] for r in rounds),
            "max": max(r[key] for r in rounds),
        }
        for key in rounds[0]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold starts per app (each with one second visitor)")
    parser.add_argument("--path", default="/", help="the attnlab page to open (the one-chart page is always /)")
    parser.add_argument("--out", help="also write every round and the summary to this JSON file")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    rounds: dict[str, list[dict[str, float]]] = {"attnlab": [], "one-chart": []}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        roots = {"attnlab": ROOT, "one-chart": one_chart_app(Path(tmp))}
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        for i in range(args.runs):
            order = ["attnlab", "one-chart"] if i % 2 == 0 else ["one-chart", "attnlab"]
            for name in order:
                rounds[name].append(one_round(browser, name, roots[name], args.path if name == "attnlab" else "/"))
                print(f"run {i + 1} {name}: " + ", ".join(f"{k} {v:.3g}" for k, v in rounds[name][-1].items()))
        browser.close()

    stats = {name: summary(r) for name, r in rounds.items()}
    print(f"\nmedians of {args.runs} (min..max):")
    for key in stats["attnlab"]:
        cells = [f"{s[key]['median']:.3g} ({s[key]['min']:.3g}..{s[key]['max']:.3g})" for s in stats.values()]
        print(f"  {key:18s} attnlab {cells[0]:28s} one-chart {cells[1]}")
    print("\nagainst the goals:")
    for kind, allowed in GOALS_S.items():
        gap = stats["attnlab"][f"{kind}_s"]["median"] - stats["one-chart"][f"{kind}_s"]["median"]
        verdict = "met" if gap <= allowed else f"missed by {gap - allowed:.2f} s"
        print(f"  {kind:6s}: attnlab is {gap:+.2f} s after the one-chart page (goal <= {allowed} s): {verdict}")
    if args.out:
        Path(args.out).write_text(json.dumps({"rounds": rounds, "summary": stats}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
