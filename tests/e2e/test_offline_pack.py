"""The offline pack opened from disk in Chromium with every network request aborted: all 11 charts draw.

No Streamlit server: the file is written by `pack_html` and opened as file://. Every request
other than the file itself is aborted and recorded, and so is any Content-Security-Policy
violation, so a CDN script, a web font or an injected <img> would show up as a failure.
"""

from __future__ import annotations

import pytest

from attnlab.export_html import pack_html
from attnlab.pipeline import LabConfig, run_lab
from attnlab.ui.app.i18n import catalog

pytestmark = pytest.mark.e2e

HOSTILE = "<img src=x onerror=alert(1)>"
DRAWN = "[...document.querySelectorAll('.js-plotly-plot')].filter(d => d.querySelector('.main-svg')).length"
WATCH_CSP = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.blockedURI));"
)


def open_offline(context, path):
    """Open `path` as file:// in a new tab whose every other request is aborted; returns (tab, requests tried besides
    it). The tab belongs to the shared profile (its renderer is warm) but not its network: a tab with routes fetches
    nothing from the profile's cache either, so a script the pack only links to fails here as it would offline."""
    url = path.as_uri()
    others: list[str] = []

    def only_the_file(route) -> None:
        if route.request.url == url:
            route.continue_()
        else:
            others.append(route.request.url)
            route.abort()

    tab = context.new_page()
    tab.route("**/*", only_the_file)
    tab.add_init_script(WATCH_CSP)
    tab.on("dialog", lambda dialog: (others.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    tab.goto(url)
    return tab, others


def assert_draws_offline(tab, others: list[str]) -> None:
    """A pack of `HOSTILE` text drew all 11 charts offline: the token shown as text, no request, no policy report."""
    tab.wait_for_function(f"{DRAWN} === 11", timeout=60_000)
    assert tab.evaluate(DRAWN) == 11
    assert HOSTILE in tab.locator("p.sentence").inner_text()
    assert tab.locator("img").count() == 0
    assert tab.evaluate("window.__csp") == []
    assert others == []


def test_pack_draws_every_chart_with_the_network_blocked(context, tmp_path):
    """The English pack, written by `pack_html` itself (test_present.py downloads the Chinese one from the page)."""
    lang = "en"
    config = LabConfig(text=f"<BOS> I like you {HOSTILE} 我 <EOS>", d_model=8, heads=2, causal=True, seed=3)
    strings = catalog(lang)
    page = pack_html(
        config,
        run_lab(config),
        app_url="http://127.0.0.1:8501/?text=x&causal=true",
        tr=lambda key, **fields: strings[key].format(**fields) if fields else strings[key],
        lang=lang,
    )
    path = tmp_path / "attnlab-pack.html"
    path.write_text(page, encoding="utf-8")
    tab, others = open_offline(context, path)
    try:
        assert_draws_offline(tab, others)
    finally:
        tab.close()


def test_the_harness_sees_a_page_that_reaches_out(context, tmp_path):
    path = tmp_path / "online.html"
    path.write_text('<!doctype html><script src="https://cdn.plot.ly/plotly-3.0.0.min.js"></script><p>x</p>')
    tab, others = open_offline(context, path)
    try:
        tab.wait_for_selector("p")
        assert others == ["https://cdn.plot.ly/plotly-3.0.0.min.js"]
    finally:
        tab.close()
