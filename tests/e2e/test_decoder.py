"""Trained decoder in a real Chromium: a live training run redraws itself (a polling fragment) until it is done."""

from __future__ import annotations

import re

import pytest

from attnlab.limits import LIVE_TRAIN_BUDGET_S
from attnlab.testing import PATIENCE_MS, click_point
from attnlab.trained.training import SCORE_EVERY
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import main_text, no_exception, open_app, rerun

pytestmark = pytest.mark.e2e
CAT = catalog("en")
GOES_MS = LIVE_TRAIN_BUDGET_S * 1000 + PATIENCE_MS  # the runner stops a run at its budget; then a poll, a rerun


def test_a_live_run_redraws_its_progress_until_done_without_any_click(page, server, hold):
    """The run is held going after its last step (`hold`), so the page shows it going however slow the machine is;
    once let go, only the fragment's own polling can bring its end (nothing else reruns the page). A machine too slow
    for 20 steps within the run's time budget ends the run there, and the page says so beside the steps it took."""
    open_app(page, server, "/decoder?lang=en&model=1l&open=yours")
    assert no_exception(page)
    live = '[class*="st-key-decoder-live_"] [data-testid="stPlotlyChart"]:has(.main-svg)'  # the run's two charts
    assert page.locator(live).count() == 0
    steps = page.get_by_label("Training steps")
    steps.fill("20")
    rerun(page, lambda: steps.press("Enter"))
    rerun(page, lambda: page.get_by_role("button", name="Start training").click())
    assert page.locator('[data-testid="stProgress"]').count() == 1 and "Done:" not in main_text(page)  # going
    rerun(page, hold, timeout=GOES_MS, whole=True)  # let it end: the fragment sees it and reruns the page
    said = main_text(page)
    done = int(re.search(r"Step (\d+) of 20", said).group(1))
    ends = [CAT["decoder.live_budget"].format(budget=round(LIVE_TRAIN_BUDGET_S), done=done)]  # out of time
    ends += ["Done: 20 steps"] if done == 20 else []  # every step taken: what a machine not overloaded shows
    assert no_exception(page) and any(end in said for end in ends), said
    assert page.locator(live).count() == 1 + (done >= SCORE_EVERY)  # the loss, and the heads' scores once scored


@pytest.mark.slow
def test_clicking_a_cell_of_the_patching_map_opens_that_head_in_both_runs(page, server):
    open_app(page, server, "/decoder?lang=en&inside=heads&seq=k+3+x+m+q+7+k+3+x+m+q+7+k+3+x")
    assert no_exception(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').nth(2)  # after the two layers' grids: the patching map
    click_point(page, chart.locator(".scatterlayer .trace").first.locator("path.point").nth(5))  # layer 2, head 2
    assert no_exception(page) and "Head 2.2: patching restores" in main_text(page)
