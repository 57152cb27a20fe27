"""The Language model page on a phone in a real Chromium: nothing scrolls sideways, every chart draws, and a tap on a
character of the painted text (a Plotly point selection, which AppTest cannot send) shows what was predicted there."""

from __future__ import annotations

import pytest

from attnlab.lm import load
from attnlab.lmlab.texts import first_text
from attnlab.testing import click_point
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import SIDEWAYS, chart_count, main_text, no_exception, open_app

pytestmark = pytest.mark.e2e
PHONE = {"width": 390, "height": 844}


@pytest.mark.slow
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


SECTIONS = "&open=lens,attribution,branches&top_k=12&temperature=0.8"
POEM = "%E5%BA%8A%E5%89%8D%E6%98%8E%E6%9C%88%E5%85%89%EF%BC%8C%E7%96%91%E6%98%AF%E5%9C%B0%E4%B8%8A%E9%9C%9C%E3%80%82"


def points(page, key: str):
    """The click targets of one of the page's charts (its invisible markers, or its bars)."""
    chart = page.locator(f".st-key-lm-{key} [data-testid='stPlotlyChart']")
    return chart.locator(".scatterlayer .trace path.point, .barlayer .trace path")


@pytest.mark.slow
def test_the_sections_below_the_fold_fit_a_phone_and_answer_taps(page, server):
    """With the lens, the attribution and the branches open: nothing scrolls sideways on a phone, every chart draws,
    a tapped lens cell picks its position, a tapped character of a branch shows its alternatives, and a tapped head's
    bar opens that head stage by stage."""
    page.set_viewport_size(PHONE)
    open_app(page, server, f"/lm?lang=zh&text={POEM}{SECTIONS}")
    assert no_exception(page) and page.evaluate(SIDEWAYS) == []
    charts = page.locator('[data-testid="stPlotlyChart"]').count()
    assert charts >= 7 and chart_count(page) == charts  # the default link's 4 and the 3 opened (sinks, training shut)
    words = catalog("zh")
    layer_1 = page.locator(".st-key-lm-lens_chart .scatterlayer .trace").nth(2)  # the text's words, then a trace a row
    click_point(page, layer_1.locator("path.point").nth(3))  # layer 1 at position 3 (明): the prediction of 月
    assert no_exception(page) and words["lm.top_at"].format(i=4, piece="月") in main_text(page)
    click_point(page, points(page, "branch_chart").nth(2))  # the first row's third character
    assert no_exception(page)
    assert words["lm.branch_alt_help"] in main_text(page) and page.locator(".st-key-lm-alt_0").count() == 1
    bars = points(page, "parts_chart")
    heads = page.locator(".st-key-lm-parts_chart .barlayer .trace").nth(1).locator("path")  # the heads' trace
    shape = load("zh").cfg
    assert bars.count() > heads.count() == shape.num_hidden_layers * shape.num_attention_heads
    stage_charts = page.locator('[class*="st-key-lm-st-"] [data-testid="stPlotlyChart"]')
    assert stage_charts.count() == 0 and "layer=1&head=1" in page.url
    click_point(page, heads.nth(shape.num_attention_heads + 1))  # the bar of head 2.2
    assert no_exception(page)
    assert "layer=2&head=2" in page.url
    assert stage_charts.count() >= 5  # the one-head view opened, stage by stage
