"""A finger on a phone: a swipe over a chart scrolls the page, as a swipe beside it does (`widgets.swipeable`; a chart
whose tap picks something, `touch`), and a tap shows a toolbar that leaves the panels' titles in view
(`toolbar.config`)."""

from __future__ import annotations

import pytest

from attnlab.lmlab.texts import first_text
from attnlab.testing import PHONE, rerun
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import SIDEWAYS, chart_count, main_text, no_exception, open_app

pytestmark = pytest.mark.e2e
SWIPE_PX = 200  # upwards, in ten moves a frame apart, as a thumb scrolls a page down
SCROLLED = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"
STILL = """() => new Promise(done => {
  const main = document.querySelector('[data-testid="stMain"]');
  let last = -1, same = 0;
  const tick = () => {
    same = main.scrollTop === last ? same + 1 : 0;
    last = main.scrollTop;
    if (same >= 5) done(true); else requestAnimationFrame(tick);
  };
  tick();
})"""  # the page's scroll position the same for five frames: any fling has ended


def finger(tab):
    """A phone's width and touch for this tab; the CDP session that touches it."""
    tab.set_viewport_size(PHONE["viewport"])
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    return cdp


def tap(cdp, x: float, y: float) -> None:
    """A finger down and up at (x, y), not moving."""
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def swipe(tab, cdp, x: float, y: float) -> float:
    """How far the page scrolled under a swipe from (x, y) up by SWIPE_PX."""
    before = tab.evaluate(SCROLLED)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 11):
        point = {"x": x, "y": y - SWIPE_PX * step / 10}
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        tab.wait_for_timeout(16)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    tab.evaluate(STILL)
    return tab.evaluate(SCROLLED) - before


OVERLAPS = """el => {
  const bar = el.querySelector('.modebar').getBoundingClientRect();
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const titles = [...el.querySelectorAll('.annotation-text')].map(t => [t.textContent, t.getBoundingClientRect()]);
  return {titles: titles.length, under: titles.filter(([, box]) => meets(bar, box)).map(([text]) => text)};
}"""


def test_a_swipe_over_a_phones_chart_scrolls_and_a_tap_shows_a_toolbar_that_covers_no_panels_title(page, server):
    """One visit: a swipe over a stage halfway down, then a tap on the first chart of two titled panels."""
    cdp = finger(page)
    open_app(page, server, "/?lang=zh")
    assert no_exception(page) and chart_count(page) > 3
    charts = page.locator('[data-testid="stPlotlyChart"]')
    chart = charts.nth(3)  # a stage halfway down the page
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    over = swipe(page, cdp, box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.6)
    beside = swipe(page, cdp, 8, box["y"] + box["height"] * 0.6)  # the column's left margin: the control
    assert beside > SWIPE_PX / 2, f"the page did not scroll under a swipe beside the chart ({beside} px)"
    assert over > SWIPE_PX / 2, f"the chart took the swipe: the page scrolled {over} px, {beside} beside it"

    panels = [i for i in range(charts.count()) if charts.nth(i).locator(".annotation-text").count() >= 2]
    assert panels, "no chart of the Playground has two titled panels"
    chart = charts.nth(panels[0])
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    tap(cdp, box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)  # a cell of the first panel
    chart.locator(".modebar").wait_for(state="visible")
    seen = chart.evaluate(OVERLAPS)
    assert seen["titles"] >= 2 and not seen["under"], f"the toolbar covers {seen['under']}"


def test_a_swipe_over_a_chart_a_tap_picks_from_scrolls_the_page_and_a_tap_still_picks(page, server):
    """The language model's painted text. Streamlit gives a chart with a selection Plotly's pan, whose touch handling
    held the swipe (0 px) and dropped the tap (no run)."""
    cdp = finger(page)
    open_app(page, server, "/lm?lang=zh")
    painted = page.locator('[data-testid="stPlotlyChart"]').first
    assert no_exception(page) and chart_count(page) > 1
    assert page.evaluate(SIDEWAYS) == []  # the page, its main column, its content: none wider than it shows
    box = painted.bounding_box()
    over = swipe(page, cdp, box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.5)
    assert over > SWIPE_PX / 2, f"the painted text took the swipe: the page scrolled {over} px"
    character = painted.locator(".scatterlayer .trace").first.locator("path.point").nth(2)  # the 3rd character
    character.scroll_into_view_if_needed()
    at = character.bounding_box()
    rerun(page, lambda: tap(cdp, at["x"] + at["width"] / 2, at["y"] + at["height"] / 2))
    assert no_exception(page)
    assert catalog("zh")["lm.top_at"].format(i=3, piece=first_text("zh")[2]) in main_text(page)
