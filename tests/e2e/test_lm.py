"""The Language model page on a phone in a real Chromium: nothing scrolls sideways, every chart draws, and a tap on a
character of the painted text (a Plotly point selection, which AppTest cannot send) shows what was predicted there."""

from __future__ import annotations

import pytest

from attnlab.lmlab.texts import first_text
from attnlab.testing import click_point
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import chart_count, main_text, no_exception, open_app

pytestmark = pytest.mark.e2e
PHONE = {"width": 390, "height": 844}
SIDEWAYS = """() => [document.documentElement, document.querySelector('[data-testid="stMain"]'),
  document.querySelector('[data-testid="stMainBlockContainer"]')].filter(el => el.scrollWidth > el.clientWidth)
  .map(el => `${el.getAttribute('data-testid') || 'document'}: ${el.scrollWidth} > ${el.clientWidth}`)"""


def test_on_a_phone_nothing_scrolls_sideways_and_a_tapped_character_shows_its_prediction(page, server):
    page.set_viewport_size(PHONE)
    open_app(page, server, "/lm?lang=zh&open=sinks,training")  # the sections below the fold opened too
    assert no_exception(page)
    assert page.evaluate(SIDEWAYS) == []  # the page, its main column, its content: none wider than it shows
    charts = page.locator('[data-testid="stPlotlyChart"]').count()
    assert charts >= 8 and chart_count(page) == charts  # every chart drew
    painted = page.locator('[data-testid="stPlotlyChart"]').first
    click_point(page, painted.locator(".scatterlayer .trace").first.locator("path.point").nth(2))  # the 3rd character
    assert no_exception(page)
    said = catalog("zh")["lm.top_at"].format(i=3, piece=first_text("zh")[2])
    assert said in main_text(page)
