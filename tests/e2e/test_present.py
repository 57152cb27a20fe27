"""Presenter mode and the Real model page in Chromium: a link stepped through, a question answered, the pack offline."""

from __future__ import annotations

from urllib.parse import quote_plus

import pytest

from attnlab.pipeline import LabConfig
from attnlab.testing import click_point
from tests.e2e.conftest import chart_count, open_app, rerun
from tests.e2e.test_offline_pack import HOSTILE, assert_draws_offline, open_offline

pytestmark = pytest.mark.e2e


def test_the_matrix_stays_hidden_until_the_question_is_answered(page, server):
    open_app(page, server, "/present?text=I+like+you&step=2&lang=en")
    assert chart_count(page) == 0
    page.get_by_label("Your answer").fill(f"3 x {LabConfig().d_model}")
    rerun(page, page.get_by_role("button", name="Check my answer").click)
    assert page.get_by_test_id("stAlertContentSuccess").count() == 1
    assert chart_count(page) == 1


@pytest.mark.slow
def test_the_pack_downloaded_from_the_page_draws_offline(page, context, server, tmp_path):
    """The Chinese pack as a teacher downloads it, hostile token included: it draws every chart with the network
    blocked, shows the token as text and breaks no content policy (test_offline_pack.py checks the English one)."""
    text = quote_plus(f"<BOS> I like you {HOSTILE} 我 <EOS>")
    open_app(page, server, f"/present?text={text}&causal=true&heads=2&seed=3&lang=zh")
    page.get_by_text("离线课堂资料包").click()
    button = page.get_by_role("button", name="HTML 资料包（可离线使用）")
    button.wait_for()
    with page.expect_download(timeout=60_000) as download:
        button.click()
    path = tmp_path / "pack.html"
    download.value.save_as(path)
    tab, others = open_offline(context, path)
    try:
        assert_draws_offline(tab, others)
    finally:
        tab.close()


@pytest.mark.slow
def test_a_click_on_a_head_in_the_model_view_opens_it(page, server):
    open_app(page, server, "/real-model?view=model&lang=en&text=The+cat+sat+on+the+mat.")
    assert chart_count(page) == 1
    click_point(page, page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').nth(14))  # layer 2, head 3
    assert "view=head" in page.url and "layer=2" in page.url and "head=3" in page.url
    assert chart_count(page) == 2
