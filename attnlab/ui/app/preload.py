"""Start loading the chart library in the browser as a run begins, while the server still computes.

Streamlit's frontend fetches and evaluates Plotly (one 4.7 MB script; evaluating it took 0.8 s of the page's
main thread on a 2-core machine) only when the first chart arrives. A page whose first chart waits for torch
would pay both in turn, so every run opens with a small script that imports that same module once the frame
in hand has painted: on a session's first run the browser loads it while the server imports torch and runs the
pipeline (the heading, which also waits for torch, then waits for that evaluation too: on the 2-core test
machine it painted about 0.5 s later on a cold start, and the first chart about 0.5 s sooner); later runs
find it loaded (the element stays, so the page never shifts by its row). The module's file name carries a hash
of the frontend build, so it is read from the installed Streamlit; where it cannot be found, nothing is sent
and charts load as they always did.

The same script starts loading the font faces a page's text can use (the formulas' KaTeX faces, code, italics).
Plotly draws a chart again, every cell, once any font face that was not loaded when its draw began has loaded
(the text it measured may have changed width): a formula's large brackets or a code comment's italics, first
used below the charts, redrew every chart above them (15 on the Multi-head page at 64 heads: its heatmaps were
painted 74 times, now 50). Loaded while the server computes, they are there before the first chart. Chromium also
makes every face anew, unloaded, when some elements add styles (a data frame's, say); the first of those to load
then starts the others, so that they load together instead of one by one as the text below needs them.

The same element holds the frontend's loading placeholders still (`STILL`). Each element whose code the browser
has not loaded yet (a chart, a formula, a table) waits as a grey box that pulses forever, as Streamlit draws it.
While Plotly loaded, 15 such boxes on the Cross-attention page at its largest settings kept the GPU process
compositing 60 frames a second: 1.7 s of its CPU per visit on a 2-core machine, 0.3 s with the boxes still. The
whole machine's CPU per visit (`scripts/draw_profile.py`) went from 12.6 to 10.1 s, and with both cores busy with
other work the page settled in 8.5 s instead of 10.9 s (medians of 5 visits taken in turn). Streamlit itself stops
the pulse for readers who ask for reduced motion; a still box says "loading" as well.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

FRONTEND_JS = Path(st.__file__).parent / "static" / "static" / "js"  # the frontend's scripts, as served
SCRIPT = """<script>(() => {
  const fonts = () => document.fonts.forEach(face => {
    if (face.status === "unloaded" && FONTS.test(face.family)) face.load().catch(() => {});
  });
  if (document.fonts && !window.attnlabFonts) {  // once per page
    window.attnlabFonts = true;
    fonts();
    document.fonts.addEventListener("loading", fonts);  // faces made anew (below) load the rest with the first one
  }
  const entry = document.querySelector('script[type="module"][src*="/static/js/index."]');
  const load = () => import(new URL(MODULE, entry.src).href).catch(() => {});
  if (entry) requestAnimationFrame(() => setTimeout(load, 0));  // let what has arrived paint first
})();</script>"""
STILL = '<style>[data-testid="stSkeleton"],[data-testid="stSkeletonElement"]{animation:none!important}</style>'
FONTS = "/^(KaTeX_|Source Sans|Source Code Pro|Material Symbols)/"  # what a page can use (no theme sets Source Serif)


@functools.cache
def plotly_module() -> str | None:
    """File name of the frontend's Plotly chart module (`PlotlyChart.<hash>.js`); None if there is not one."""
    found = sorted(p.name for p in FRONTEND_JS.glob("PlotlyChart.*.js"))
    return found[0] if len(found) == 1 else None


def script(module: str) -> str:
    """The page script: import `module` from beside the frontend's own entry script, where the frontend does."""
    return SCRIPT.replace("MODULE", json.dumps(module)).replace("FONTS", FONTS)


def charts() -> None:
    """Ask the browser to load the chart library now, before anything this run computes, and to hold placeholders still.

    Where the chart module cannot be found only the style is sent, and Streamlit keeps a style-only element out of
    the page's flow.
    """
    module = plotly_module()
    if module is None:
        st.html(STILL)
    else:
        st.html(STILL + script(module), unsafe_allow_javascript=True)
