"""What a page's charts cost Plotly to draw, checkout against checkout: the one part of a visit this machine can time.

usage: python -m scripts.chart_cost [--page playground] [--query "heads=4"] [--width 358] [--slowdown 4] [--runs 9]
       [--root DIR ...]

A phone visit's wall time on a 2-core machine spreads by a second or two from one visit to the next (the floor page
itself took 8.8 to 11.3 s in one run of `scripts.phone`), more than most changes to a page move it. This times only
Plotly: each `--root` checkout builds the page's charts as the app sends them (AppTest, in a process of its own with
that checkout first on the path, the page's link with `--query`, its figures built for the width band of a chart
`--width` px wide, the session past its first screen), and one Chromium draws each checkout's charts in turn, one
after another as the page would, in a blank tab at that width with its CPU slowed `--slowdown` times, with the
plotly.js that plotly.py ships (the same major version as Streamlit's). Printed per checkout: the median seconds
over `--runs` drawings (the checkouts alternate, so each pair is taken in the same minutes), every run, the charts,
and how many numbers Plotly wrote in cells. A benchmark, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl

DRAW = """async ([specs, width]) => {
  const root = document.body;
  root.replaceChildren();
  const start = performance.now();
  for (const { data, layout, config } of specs) {
    const div = document.createElement('div');
    div.style.width = `${width}px`;
    root.appendChild(div);
    await Plotly.newPlot(div, data, { ...layout, width }, { ...config, responsive: false });
  }
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));  // painted
  return { seconds: (performance.now() - start) / 1000, cells: root.querySelectorAll('g.heatmap-label text').length };
}"""
WARM = "() => Plotly.newPlot(document.createElement('div'), [{ type: 'heatmap', z: [[1]] }])"


def dump(page: str, query: str, width: int) -> list[dict]:
    """The page's charts as this checkout's app sends them: spec and config of each, in page order."""
    from attnlab.figures import screen
    from attnlab.testing import app_test
    from attnlab.ui.app.viewport import BAND

    at = app_test(url_path=None if page == "playground" else page)
    at.query_params.update(dict(parse_qsl(query)))
    at.session_state[BAND] = screen.band(width)
    at.run()
    charts = at.get("plotly_chart")
    return [{"spec": json.loads(c.proto.spec), "config": json.loads(c.proto.config or "{}")} for c in charts]


def specs_of(root: Path, page: str, query: str, width: int) -> list[dict]:
    """`dump` run in a process of its own with `root`'s attnlab first on the path (this file need not be in it)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    args = [sys.executable, __file__, "--dump", "--page", page, "--query", query, "--width", str(width)]
    out = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def draw_all(browser, plotly_js: Path, specs: list[dict], width: int, slowdown: float) -> dict:
    """One drawing of every chart in a fresh context: seconds until the last is painted, cell numbers written."""
    context = browser.new_context(viewport={"width": width + 32, "height": 844})
    tab = context.new_page()
    tab.set_content("<!doctype html><body style='margin: 16px'></body>")
    tab.add_script_tag(path=str(plotly_js))
    tab.evaluate(WARM)  # Plotly's own first-call setup is not any chart's
    cdp = context.new_cdp_session(tab)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    figures = [{"data": s["spec"]["data"], "layout": s["spec"]["layout"], "config": s["config"]} for s in specs]
    result = tab.evaluate(DRAW, [figures, width])
    context.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--page", default="playground", help="a registered page's URL path ('playground' for /)")
    parser.add_argument("--query", default="", help="the link's parameters, as in its URL ('heads=4&causal=1')")
    parser.add_argument("--width", type=int, default=358, help="px of a chart (358: a 390-px phone's column)")
    parser.add_argument("--slowdown", type=float, default=4.0, help="CPU slowed this many times (4: a mid-range phone)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--root", action="append", type=Path, help="a checkout (repeat to compare)")
    parser.add_argument("--dump", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        json.dump(dump(args.page, args.query, args.width), sys.stdout)
        return 0

    import plotly
    from playwright.sync_api import sync_playwright

    from attnlab.testing import BROWSER_ARGS, ROOT

    roots = args.root or [ROOT]
    specs = {root: specs_of(root, args.page, args.query, args.width) for root in roots}
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    drawn: dict[Path, list[dict]] = {root: [] for root in roots}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        for run in range(args.runs):
            for root in roots if run % 2 == 0 else roots[::-1]:
                drawn[root].append(draw_all(browser, plotly_js, specs[root], args.width, args.slowdown))
        browser.close()
    link = f"/{'' if args.page == 'playground' else args.page}{'?' + args.query if args.query else ''}"
    link = link if len(link) <= 100 else link[:97] + "..."
    print(f"{link}: charts {args.width} px wide, CPU {args.slowdown:g}x slower, {args.runs} drawings each")
    for root in roots:
        seconds = [d["seconds"] for d in drawn[root]]
        cells = drawn[root][0]["cells"]
        runs = " ".join(f"{s:.2f}" for s in seconds)
        median = statistics.median(seconds)
        print(f"  {root}: {median:.2f} s median ({runs}), {len(specs[root])} charts, {cells} cell numbers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
