"""Multi-head, Cross-attention and Neuron pages in a real headless Chromium: charts, widgets, shared links."""

from __future__ import annotations

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attnlab.testing import run_ended
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import chart_count, main_text, no_exception, open_app, rerun

pytestmark = pytest.mark.e2e

# Keeps the class Streamlit gave the first loading placeholder it drew (each element whose code is still loading
# waits as one; the app's own first element, which holds the style under test, is such an element).
FIRST_PLACEHOLDER = """
new MutationObserver((_, observer) => {
  const box = document.querySelector('[data-testid="stSkeleton"]');
  if (box) {
    window.placeholderClass = box.className;
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""
# How the every-head chart (the page's fourth) is drawn: its height, margins and panels' places (built for a width
# band) and its colours (for a palette)
GRID_LAYOUT = """() => {
  const chart = document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')[3];
  const layout = chart._fullLayout;
  const axes = Object.keys(layout).filter(k => /^[xy]axis\\d*$/.test(k)).sort();
  return { height: layout.height, margin: layout.margin, domains: axes.map(k => layout[k].domain),
           colours: chart._fullData[0].colorscale };
}"""
# Two boxes with that class, one marked as Streamlit marks a placeholder: how many CSS animations each runs.
PULSES = """() => {
  const box = marked => {
    const el = document.createElement('div');
    el.className = window.placeholderClass;
    if (marked) el.dataset.testid = 'stSkeleton';
    document.body.appendChild(el);
    const n = el.getAnimations().length;
    el.remove();
    return n;
  };
  return { placeholder: box(true), unmarked: box(false) };
}"""


@pytest.mark.slow
def test_multihead_renders_in_chinese_and_dropout_adds_a_chart(page, server):
    open_app(page, server, "/multihead?lang=zh&heads=2&open=resplit,concat,fused,dropout,torch,full,gqa")  # all open
    assert chart_count(page) == 14 and no_exception(page)  # 11, and the MHA / GQA / MQA comparison's 3
    text = main_text(page)
    assert "拆开看多头注意力" in text and "与 PyTorch 一致" in text
    box = page.locator('[data-testid="stTextInput"] input').nth(1)  # 0: the Playground's text, 1: dropout p
    box.fill("0.5")
    rerun(page, lambda: box.press("Enter"))
    assert "p=0.5" in page.url and "heads=2" in page.url and "lang=zh" in page.url  # a rerun keeps the language
    assert "open=resplit%2Cconcat%2Cfused%2Cdropout%2Ctorch%2Cfull%2Cgqa" in page.url  # and the open sections
    assert chart_count(page) == 15 and no_exception(page)


def test_a_new_visitors_rest_comes_in_a_run_of_its_own_and_a_widget_in_it_reruns_the_whole_page(page, server):
    """Multi-head holds all but section 1 for a new visitor, then draws the rest in a run of that rest alone
    (`first_screen.rest`), for the width band the phone reported and the palette the link names, as the whole page's
    run draws it; a folded section of the rest, opened, reruns the whole page, so the link follows."""
    runs: list[int] = []  # how each script run ended, in order

    def note(payload: bytes | str) -> None:
        if (ended := run_ended(payload)) is not None:
            runs.append(ended)

    page.on("websocket", lambda ws: ws.on("framereceived", note))
    page.set_viewport_size({"width": 390, "height": 844})  # a desktop's user agent: the probe reports a phone's band
    open_app(page, server, "/multihead?lang=en&palette=cb")
    assert no_exception(page) and chart_count(page) == 4  # section 1's one, then the reshape's two and every head's
    assert ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY in runs
    held = page.evaluate(GRID_LAYOUT)
    title = f"4. {catalog('en')['multihead.resplit_title']}"
    rerun(page, lambda: page.get_by_text(title, exact=True).click(), whole=True)
    assert ForwardMsg.FINISHED_EARLY_FOR_RERUN in runs and runs[-1] == ForwardMsg.FINISHED_SUCCESSFULLY
    assert "open=resplit" in page.url and chart_count(page) == 6 and no_exception(page)
    assert page.evaluate(GRID_LAYOUT) == held  # the rest's own run built its figures for the phone's band too


@pytest.mark.slow
def test_cross_link_with_every_source_token_padded(page, server):
    open_app(page, server, "/cross?src=a+b&tgt=x+y+z&pad=0,1&lang=en&open=bottleneck,check")
    assert no_exception(page)
    text = main_text(page)
    assert "hides every source token" in text and "saw nothing" in text
    assert page.locator('[data-testid="stTextInput"] input').first.input_value() == "a b"
    assert chart_count(page) == 5  # no bottleneck chart: there is no visible source state to average


def test_loading_placeholders_hold_still_where_streamlit_pulses_them(page, server):
    """A pulsing placeholder kept the compositor drawing 60 frames a second while the page loaded (`ui/app/preload`)."""
    page.add_init_script(FIRST_PLACEHOLDER)
    open_app(page, server, "/cross?src=a+b&tgt=x")
    assert page.evaluate("window.placeholderClass")  # a placeholder was drawn: there is a class to test
    assert page.evaluate(PULSES) == {"placeholder": 0, "unmarked": 1}  # Streamlit's pulse, held still by the app


@pytest.mark.slow
def test_neuron_thinking_machines_numbers(page, server):
    open_app(page, server, "/neuron?preset=thinking")
    assert no_exception(page) and chart_count(page) == 5
    text = main_text(page)
    assert "112" in text and "96" in text and "0.88" in text and "0.12" in text
