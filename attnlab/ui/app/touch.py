"""On a phone, a swipe over a chart whose tap picks something scrolls the page too, and a tap on it still picks.

`widgets.swipeable` sends a phone's charts with no drag action, so a swipe over one scrolls the page. A chart whose
tap picks something (`on_select`: the model view, the language model's painted text, the patching map) cannot be
sent that way: Streamlit 1.67 gives such a chart Plotly's "pan" whenever its figure names no drag action, and Plotly's
touch handling then holds every swipe that starts on it (a student scrolled past the Language model's painted text
only by its margins) and, with no hover before a touch, drops a tap's pick (an emulated phone's tap picked nothing).
Taking the drag off in the browser was no cure: a tap then reached Plotly twice, as a touch and as the mouse click
the browser makes of it, and the second click unpicked what the first picked.

So a small script in the page keeps a finger's touches from the Plotly of a chart that has a drag action, while the
page's column is in a phone's band (the width probe's `data-attnlab-band`, under `screen.COLUMNS_FROM`). The browser
then scrolls the page under a swipe, as it does beside the chart, and turns a tap into the mouse events Plotly picks
from: a hover, then a click on the point under the finger. Charts with no drag action keep their touches. The script
listens on the document, as a touch goes down to its target, so nothing of it runs while a page loads and draws (a
watcher of the page's elements would run with every chart that arrived).
"""

from __future__ import annotations

import streamlit as st

from attnlab.figures import screen

SCRIPT = """<script>(() => {
  if (window.__attnlabTouch) return;  // once per page
  window.__attnlabTouch = true;
  const phone = () => Number(document.body.dataset.attnlabBand) < COLUMNS_FROM;
  const holds = gd => gd !== null && gd._fullLayout !== undefined && gd._fullLayout.dragmode !== false;
  // On the document, as the touch goes down to its target: stopped here, it never reaches Plotly's own listeners.
  const keep = e => {
    const gd = e.target instanceof Element ? e.target.closest('[data-testid="stPlotlyChart"] .js-plotly-plot') : null;
    if (phone() && holds(gd)) e.stopPropagation();
  };
  for (const kind of ['touchstart', 'touchmove', 'touchend', 'touchcancel']) {
    document.addEventListener(kind, keep, { capture: true, passive: true });
  }
})();</script>""".replace("COLUMNS_FROM", str(screen.COLUMNS_FROM))


def send() -> None:
    """Send the script (in the sidebar, each run: the browser installs it once per page)."""
    st.sidebar.html(SCRIPT, unsafe_allow_javascript=True)
