"""Every chart's toolbar downloads a PNG and an SVG at a slide's size, named for the page and the figure.

Plotly's toolbar has one image button, whose format is `config.toImageButtonOptions.format`; a button of one's
own needs a JavaScript click handler, which cannot travel in the JSON config Streamlit hands to the browser. So
the config makes Plotly's button the PNG (16:9, 1280 x 720 laid out, scale 2: 2560 x 1440 pixels), and a small
script in the page puts an SVG button beside it in every chart's toolbar: a click switches that chart's image
options to SVG for one click of Plotly's own button, then back. Both images are drawn from the figure on
screen, so they carry the page's palette; the file names say the page and the chart.
"""

from __future__ import annotations

import json
import re

import streamlit as st

SLIDE = {"width": 1280, "height": 720}  # a 16:9 slide's layout size; fonts keep their on-screen size in it
PNG_SCALE = 2
MARKER = "attnlab-svg"  # class of the added button (the browser test finds it by this)

SCRIPT = """<script>(() => {
  window.__attnlabImageTitles = TITLES;
  const retitle = () => document.querySelectorAll('.MARKER').forEach(b => {
    b.setAttribute('data-title', TITLES.svg);
    b.setAttribute('aria-label', TITLES.svg);
  });
  if (window.__attnlabImages) { retitle(); return; }
  window.__attnlabImages = true;
  const plotlys = a => (a.getAttribute('data-title') || '').startsWith('Download plot');  // Plotly's own title
  const isPng = a => !a.classList.contains('MARKER') && (plotlys(a) || a.dataset.attnlabPng);
  const add = () => {
    const titles = window.__attnlabImageTitles;
    for (const bar of document.querySelectorAll('[data-testid="stPlotlyChart"] .modebar')) {
      if (bar.querySelector('.MARKER')) continue;
      const png = [...bar.querySelectorAll('.modebar-btn')].find(isPng);
      if (!png) continue;
      png.dataset.attnlabPng = '1';
      png.setAttribute('data-title', titles.png);
      const svg = png.cloneNode(true);  // the same look; a clone carries no listener
      svg.classList.add('MARKER');
      svg.removeAttribute('data-attnlab-png');
      svg.setAttribute('data-title', titles.svg);
      svg.setAttribute('aria-label', titles.svg);
      const mark = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      mark.textContent = 'SVG';
      mark.setAttribute('x', '500'); mark.setAttribute('y', '640'); mark.setAttribute('text-anchor', 'middle');
      mark.setAttribute('font-size', '420'); mark.setAttribute('font-weight', '700');
      mark.setAttribute('fill', getComputedStyle(png.querySelector('path') || png).fill || 'currentColor');
      const icon = svg.querySelector('svg');
      if (icon) { icon.replaceChildren(mark); icon.setAttribute('viewBox', '0 0 1000 1000'); }
      svg.addEventListener('click', (event) => {
        event.preventDefault();
        const gd = bar.closest('.js-plotly-plot');
        const opts = gd && gd._context && gd._context.toImageButtonOptions;
        if (!opts) return;
        const kept = { format: opts.format, scale: opts.scale };
        Object.assign(opts, { format: 'svg', scale: 1 });
        try { png.click(); } finally { Object.assign(opts, kept); }
      });
      png.after(svg);
    }
  };
  let queued = false;
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; add(); }); } };
  new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
  add();
})();</script>"""


def file_name(page: str, key: str) -> str:
    """'attnlab-decoder-decoder-grid-0': the page ("" is the Playground) and the chart's key, safe as a file name."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", f"attnlab-{page or 'playground'}-{key}").strip("-")
    return stem[:120]


REMOVED = ["lasso2d", "select2d", "autoScale2d"]  # from every chart's toolbar
# Left out of a phone's toolbar as well: with no drag action (`widgets.swipeable`) the zoom and pan buttons would
# hand a chart back the drag that a swipe to scroll needs, and zooming in with no pan leaves the reader at the middle
# of the matrix. The toolbar keeps the PNG, the SVG and Streamlit's full screen: three buttons clear of the titles.
MOVING = ["zoom2d", "pan2d", "zoomIn2d", "zoomOut2d", "resetScale2d"]


def config(page: str, key: str, phone: bool = False) -> dict:
    """A chart's toolbar: no logo or selection tools (nor zoom and pan on a `phone`); its image button a slide-sized
    PNG named for page and chart."""
    return {
        "displaylogo": False,
        "modeBarButtonsToRemove": REMOVED + MOVING if phone else REMOVED,
        "toImageButtonOptions": {"format": "png", "filename": file_name(page, key), "scale": PNG_SCALE, **SLIDE},
    }


def script(png_title: str, svg_title: str) -> str:
    """The page script that adds the SVG button to every chart's toolbar, with both buttons' titles."""
    titles = json.dumps({"png": png_title, "svg": svg_title}, ensure_ascii=False).replace("</", "<\\/")
    return SCRIPT.replace("TITLES", titles).replace("MARKER", MARKER)


def svg_buttons(png_title: str, svg_title: str) -> None:
    """Send the script (in the sidebar, each run: the browser installs it once, and retitles on a language change)."""
    st.sidebar.html(script(png_title, svg_title), unsafe_allow_javascript=True)
