"""Trained decoder in a real Chromium: a live training run redraws itself (a polling fragment) until it is done."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import main_text, no_exception, open_app, rerun

pytestmark = pytest.mark.e2e


def test_a_live_run_redraws_its_progress_until_done_without_any_click(page, server):
    open_app(page, server, "/decoder?lang=en&model=1l")
    assert no_exception(page)
    live = '[class*="st-key-decoder-live_"] [data-testid="stPlotlyChart"]:has(.main-svg)'  # the run's two charts
    assert page.locator(live).count() == 0
    steps = page.get_by_label("Training steps")
    steps.fill("20")
    rerun(page, lambda: steps.press("Enter"))
    rerun(page, lambda: page.get_by_role("button", name="Start training").click())
    page.get_by_text("Done: 20 steps").wait_for(timeout=120_000)  # only the fragment's own polling gets it there
    assert no_exception(page) and "Step 20 of 20" in main_text(page)
    page.locator(live).nth(1).wait_for()  # the text can come a frame before Plotly has drawn the last chart
    assert page.locator(live).count() == 2  # the live loss and the live head scores, drawn by the polling fragment


def test_clicking_a_cell_of_the_patching_map_opens_that_head_in_both_runs(page, server):
    open_app(page, server, "/decoder?lang=en&inside=heads&seq=k+3+x+m+q+7+k+3+x+m+q+7+k+3+x")
    assert no_exception(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').nth(2)  # after the two layers' grids: the patching map
    chart.scroll_into_view_if_needed()
    box = chart.locator(".scatterlayer .trace").first.locator("path.point").nth(5).bounding_box()  # layer 2, head 2
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.wait_for_selector(".hoverlayer .hovertext")  # Plotly clicks the point it is hovering
    rerun(page, lambda: page.mouse.click(x, y))
    assert no_exception(page) and "Head 2.2: patching restores" in main_text(page)
