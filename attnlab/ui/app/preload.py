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

The same script keeps Plotly from drawing a chart again for a font face no chart uses. Once a draw ends, Plotly
waits on every face in `document.fonts` that was not loaded when the draw began and is loading or loaded now, then
draws the chart again, every cell (the text it measured may have changed width). Chromium makes the page's faces
anew, unloaded, as style sheets change while a page fills (seen as the first chart drew), and a formula laid out
beside a chart loads its faces while the chart draws: on a phone (CPU 4x slower) every visit of the Playground drew
its later nine charts twice for the formulas' large brackets (KaTeX_Size1). Loading every face up front, this
script's earlier way, ran too late to help (on a phone the script ran 12.3 s into a visit, once the chart module had
been evaluated, as the first charts drew): the faces it started loading made those two charts wait instead. Plotly
lists the faces by iterating `document.fonts`, the only reader of that iterator in the frontend, so on this page the
set's iterator leaves out the faces of formulas, code and icons (`NOT_IN_CHARTS`); charts draw in Noto Sans or the
body font, whose faces stay listed, and every face still loads as the text needs it. On a phone the Playground's
charts now wait on no face; its last chart came at 1.61x the one-chart page, from 2.03x, in one run of `python -m
scripts.phone` comparing the two (issue 61).

The same element holds the frontend's loading placeholders still (`STILL`). Each element whose code the browser
has not loaded yet (a chart, a formula, a table) waits as a grey box that pulses forever, as Streamlit draws it.
While Plotly loaded, 15 such boxes on the Cross-attention page at its largest settings kept the GPU process
compositing 60 frames a second: 1.7 s of its CPU per visit on a 2-core machine, 0.3 s with the boxes still. The
whole machine's CPU per visit (`scripts/draw_profile.py`) went from 12.6 to 10.1 s, and with both cores busy with
other work the page settled in 8.5 s instead of 10.9 s (medians of 5 visits taken in turn). Streamlit itself stops
the pulse for readers who ask for reduced motion; a still box says "loading" as well.

It also lets a row of option buttons (`st.segmented_control`, `st.pills`) wrap onto a second line, and a button's
label too (`WRAP`). Streamlit keeps such a row on one line and scrolls it sideways with no scroll bar shown, so
options past the column's edge were out of sight: the presenter's steps 9 to 11 on a phone, RoPE's "interleaved"
pairing, the masking page's bfloat16 and finfo(dtype).min, and the KV cache's int4 in a 1024-px window. And it cuts a
button's label that does not fit with an ellipsis: "Mea..." for Cost's "Measure again", "Pre..." for Tiled's
"Previous", "Draw a random seque..." on the decoder even at 1280 px. A style element rather than a theme setting:
Streamlit has none for either.

Last, what shows nothing takes no room (`UNSEEN`). A page script in an st.html element (this one, the toolbar's
titles, the touch script), the width probe and the first screen's signal each sat in its column as an element under a
pixel tall, with the 1rem gap that follows any element: 16 px above every page's title, 48 px between the sidebar's
settings and its About box. Hidden, they still run: a script runs as it is inserted, and the probe measures the main
column, not itself.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import streamlit as st

from attnlab.ui.app import first_screen, viewport

FRONTEND_JS = Path(st.__file__).parent / "static" / "static" / "js"  # the frontend's scripts, as served
SCRIPT = """<script>(() => {
  const faces = document.fonts;
  if (faces && !Object.prototype.hasOwnProperty.call(faces, Symbol.iterator)) {  // once per page
    const every = FontFaceSet.prototype[Symbol.iterator];
    Object.defineProperty(faces, Symbol.iterator, {
      configurable: true,
      value() { return Array.from(every.call(this)).filter(face => !NOT_IN_CHARTS.test(face.family)).values(); },
    });
  }
  const entry = document.querySelector('script[type="module"][src*="/static/js/index."]');
  const load = () => import(new URL(MODULE, entry.src).href).catch(() => {});
  if (entry) requestAnimationFrame(() => setTimeout(load, 0));  // let what has arrived paint first
})();</script>"""
STILL = '<style>[data-testid="stSkeleton"],[data-testid="stSkeletonElement"]{animation:none!important}</style>'
WRAP = (
    '<style>[data-testid="stButtonGroup"]>div{flex-wrap:wrap;overflow:visible}'
    ':is([data-testid="stButton"],[data-testid="stDownloadButton"],[data-testid="stFormSubmitButton"]) button '
    ':is([data-testid="stMarkdownContainer"],[data-testid="stMarkdownContainer"] p)'
    "{white-space:normal;overflow-wrap:normal;word-break:normal}</style>"
)
NOT_IN_CHARTS = "/^(KaTeX_|Source Code Pro|Material Symbols)/"  # the faces of formulas, code and icons


def key_class(key: str) -> str:
    """The class Streamlit's frontend gives the element of widget `key` (`st-key-`, other characters as hyphens)."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


UNSEEN = (  # page scripts (an st.html of scripts and styles) and the page's own components, which show nothing
    '<style>[data-testid="stElementContainer"]:is(:has(>[data-testid="stHtml"])'
    ':not(:has(>[data-testid="stHtml"]>:not(script,style))),'
    + ",".join(f".{key_class(key)}" for key in (viewport.KEY, first_screen.SIGNAL))
    + "){display:none}</style>"
)


@functools.cache
def plotly_module() -> str | None:
    """File name of the frontend's Plotly chart module (`PlotlyChart.<hash>.js`); None if there is not one."""
    found = sorted(p.name for p in FRONTEND_JS.glob("PlotlyChart.*.js"))
    return found[0] if len(found) == 1 else None


def script(module: str) -> str:
    """The page script: import `module` from beside the frontend's own entry script, where the frontend does."""
    return SCRIPT.replace("MODULE", json.dumps(module)).replace("NOT_IN_CHARTS", NOT_IN_CHARTS)


def charts() -> None:
    """Ask the browser to load the chart library now, before anything this run computes, to hold placeholders still
    and to wrap rows of option buttons and buttons' labels.

    Where the chart module cannot be found only the style is sent, and Streamlit keeps a style-only element out of
    the page's flow.
    """
    module = plotly_module()
    if module is None:
        st.html(STILL + WRAP + UNSEEN)
    else:
        st.html(STILL + WRAP + UNSEEN + script(module), unsafe_allow_javascript=True)
