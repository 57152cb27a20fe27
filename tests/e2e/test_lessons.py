"""The lesson pages in a real headless Chromium: charts draw, a widget change updates the numbers and the link,
and a shared link reproduces what its sender saw."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import chart_count, metric_value, no_exception, open_app, rerun, settle

pytestmark = pytest.mark.e2e


def test_overview_leads_to_the_first_lesson_whose_weight_edit_updates_the_sum_and_the_link(page, server):
    open_app(page, server, "/lessons?lang=en")
    assert page.get_by_text("Attention in six lessons").is_visible()
    assert page.get_by_text("Open the lesson").count() == 6
    page.get_by_text("Open the lesson").first.click()
    page.wait_for_url("**/soft-dictionary**")
    settle(page)
    page.locator('[data-testid="stPlotlyChart"]:has(.main-svg)').nth(2).wait_for()
    assert chart_count(page) == 3 and no_exception(page)
    assert metric_value(page, "Looked-up value") == "8"
    box = page.locator('[data-testid="stNumberInput"]').filter(has_text="chair").nth(1).locator("input")
    box.fill("0.5")
    rerun(page, lambda: box.press("Enter"))
    assert metric_value(page, "Looked-up value") == "9"  # 0.6*10 + 0.4*5 + 0.5*2
    assert "w_chair=0.5" in page.url


@pytest.mark.slow
def test_shared_links_reproduce_positions_and_masking(page, server):
    open_app(page, server, "/positions?lang=zh&text=I+like+green+tea&pe=true&perm=swap&d_model=16")
    assert chart_count(page) == 5 and no_exception(page)
    assert page.get_by_text("加上位置编码", exact=True).is_visible()
    assert float(metric_value(page, "最大差值（无位置编码）")) < 1e-12
    assert float(metric_value(page, "最大差值（有位置编码）")) > 1e-3
    open_app(page, server, "/masking?lang=en&dtype=bfloat16&fill=-1e9")
    assert metric_value(page, "Stored as") == "-998244352"
    rerun(page, page.get_by_text("float16", exact=True).first.click)
    assert metric_value(page, "Stored as") == "-inf"
    assert page.get_by_text("masked_fill refuses").is_visible()
    assert "dtype=float16" in page.url
