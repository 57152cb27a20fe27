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
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

FRONTEND_JS = Path(st.__file__).parent / "static" / "static" / "js"  # the frontend's scripts, as served
SCRIPT = """<script>(() => {
  const entry = document.querySelector('script[type="module"][src*="/static/js/index."]');
  const load = () => import(new URL(MODULE, entry.src).href).catch(() => {});
  if (entry) requestAnimationFrame(() => setTimeout(load, 0));  // let what has arrived paint first
})();</script>"""


@functools.cache
def plotly_module() -> str | None:
    """File name of the frontend's Plotly chart module (`PlotlyChart.<hash>.js`); None if there is not one."""
    found = sorted(p.name for p in FRONTEND_JS.glob("PlotlyChart.*.js"))
    return found[0] if len(found) == 1 else None


def script(module: str) -> str:
    """The page script: import `module` from beside the frontend's own entry script, where the frontend does."""
    return SCRIPT.replace("MODULE", json.dumps(module))


def charts() -> None:
    """Ask the browser to load the chart library now, before anything this run computes."""
    module = plotly_module()
    if module is not None:
        st.html(script(module), unsafe_allow_javascript=True)
