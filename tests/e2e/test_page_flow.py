"""What shows nothing takes no room: the page's scripts and its own components sit outside the flow of elements."""

from __future__ import annotations

import pytest

from attnlab.testing import settle
from tests.e2e.conftest import open_app

pytestmark = pytest.mark.e2e

# Each element in the main column or the sidebar that the page lays out (in the flow, so given the column's gap
# below it) with nothing to show: under a pixel tall
EMPTY_IN_FLOW = """() => [...document.querySelectorAll('[data-testid="stElementContainer"]')]
  .filter(e => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height < 1)
  .map(e => (e.closest('[data-testid="stSidebar"]') ? 'sidebar ' : 'main ') + e.innerHTML.slice(0, 60))"""
# The top of the main column's first shown element, and where its content starts (below the column's padding)
FIRST_AT = """() => { const block = document.querySelector('[data-testid="stMainBlockContainer"]');
  const shown = [...block.firstElementChild.children].find(e => getComputedStyle(e).display !== 'none');
  return [shown.getBoundingClientRect().top,
    block.getBoundingClientRect().top + parseFloat(getComputedStyle(block).paddingTop)]; }"""
SCRIPTS_RAN = "() => [window.__attnlabTouch === true, !!window.__attnlabImageTitles, document.body.dataset.attnlabBand]"


@pytest.mark.parametrize("link", ["/cross?lang=en", "/present?lang=zh"])
def test_scripts_and_probes_take_no_room_yet_still_run(page, server, link):
    """Each page script, the width probe and the presenter's styles sat in the flow with the 1rem gap a visible
    element has: 16 px over every page's title and 48 px between the sidebar's settings and its About. They still
    run, hidden (`preload.UNSEEN`): the touch and toolbar scripts, and the probe, which reports the main column."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_app(page, server, link)
    page.wait_for_function("() => document.body.dataset.attnlabBand !== undefined")
    settle(page)
    assert page.evaluate(EMPTY_IN_FLOW) == []
    assert page.evaluate(SCRIPTS_RAN) == [True, True, "800"]
    first, start = page.evaluate(FIRST_AT)
    assert first == pytest.approx(start, abs=1)  # the page's first element starts where the column's content does
