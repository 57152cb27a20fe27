"""A live class in Chromium: a teacher's presenter and two students' phones (390 px, Chinese) in contexts of their own.

The server is the shared one, on its embedded store (an SQLite file in its temporary folder, no setting). Nothing is
reloaded: each student's tab carries a marker that a reload would wipe, and the teacher's Next, the answers and the
reveal all travel through the store and the students' polls.
"""

from __future__ import annotations

import re

import pytest

from attnlab.testing import BROWSER_ARGS, PATIENCE_MS
from tests.e2e.conftest import CHROMIUM, open_app, rerun, settle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
PHONE = {"width": 390, "height": 844}
ARRIVES_MS = 60_000  # a cap for a loaded machine; the budget (3 s) is measured by scripts/live_budgets.py


@pytest.fixture
def phones(playwright_driver):
    """Two students' phones: one browser, a context (cookies, storage, session) of its own for each."""
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
    contexts = [browser.new_context(viewport=PHONE, locale="zh-CN", device_scale_factor=2) for _ in range(2)]
    for context in contexts:
        context.set_default_timeout(PATIENCE_MS)
    yield [context.new_page() for context in contexts]
    browser.close()


def on_step(tab, k: int) -> None:
    """Wait until the tab shows step k's heading (its poll found the teacher's step), then until it has settled."""
    tab.locator("h4").filter(has_text=re.compile(rf"^{k}\. ")).wait_for(timeout=ARRIVES_MS)
    settle(tab)


def test_the_teachers_next_answers_and_reveal_travel_through_the_class(page, phones, server):
    open_app(page, server, "/present?text=I+like+you&step=1&lang=en")
    rerun(page, page.get_by_role("button", name="Start a live class").click)
    code = re.search(r"class=([A-Z0-9]{6})", page.url).group(1)
    assert page.get_by_role("heading", name=code).count() == 1  # the code the room reads
    assert page.locator('[data-testid="stSidebar"] img').count() == 1  # and its QR code
    for tab in phones:
        open_app(tab, server, f"/present?class={code}")  # no lang: the phone's language, Chinese
        assert f"实时课堂 {code}" in tab.locator('[data-testid="stMain"]').inner_text()
        on_step(tab, 1)
        tab.evaluate("() => { window.stillHere = true; }")  # a reload would wipe it
    rerun(page, page.get_by_role("button", name="Next").first.click)
    for tab, typed in zip(phones, ("（3，8）", "8 x 3"), strict=True):
        on_step(tab, 2)  # the teacher's Next, found by the poll
        tab.get_by_label("你的答案").fill(typed)
        rerun(tab, tab.get_by_role("button", name="提交答案").click)
        assert tab.get_by_text("你的答案：").count() == 1
    answered = page.locator('[data-testid="stMetric"]').filter(has_text="Answered")
    answered.locator('[data-testid="stMetricValue"]').filter(has_text="2").wait_for(timeout=ARRIVES_MS)
    rerun(page, page.get_by_role("button", name="Reveal the answer").click)
    tally = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="✓ 3 × 8")
    assert tally.count() == 1 and "8 × 3" in tally.inner_text()  # both answers reached the tally, the right one marked
    for tab, verdict in zip(phones, ("stAlertContentSuccess", "stAlertContentError"), strict=True):
        tab.get_by_test_id(verdict).first.wait_for(timeout=ARRIVES_MS)  # the reveal, found by the poll
        settle(tab)
        assert tab.evaluate("() => window.stillHere === true")  # followed without a reload
        assert tab.locator('[data-testid="stPlotlyChart"]').count() == 2  # the class's tally and the matrix
        assert tab.locator('[data-testid="stException"]').count() == 0
