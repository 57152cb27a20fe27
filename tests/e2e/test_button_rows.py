"""Rows of option buttons in Chromium: every option shows whole, on a line of its own where the row is too narrow."""

from __future__ import annotations

import pytest

from attnlab.testing import settle
from tests.e2e.conftest import open_app

pytestmark = pytest.mark.e2e

PHONE, PROJECTOR_1024 = (390, 844), (1024, 768)
# Each button of the page's option rows with an end that shows something else: cut off by a row that scrolls sideways
CLIPPED = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stButtonGroup"] button')]
  .filter(b => { const r = b.getBoundingClientRect(), y = r.y + r.height / 2;
    return [r.left + 3, r.right - 3].some(x => !b.contains(document.elementFromPoint(x, y))); })
  .map(b => b.innerText)"""
# The page's buttons whose label is cut short with an ellipsis: some part of the button is wider than it shows
ELLIPSIZED = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stButton"] button')]
  .filter(b => [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)).map(b => b.innerText)"""


@pytest.mark.parametrize(
    ("link", "size", "buttons"),
    [
        ("/present?text=I+like+you&heads=4&step=5&quiz=false", PHONE, 11 + 5),  # the steps, all heads and four
        ("/present?text=I+like+you&heads=4&step=5&quiz=false", PROJECTOR_1024, 11 + 5),
        ("/rope", PROJECTOR_1024, None),  # the pairing's two long names
        ("/masking", PROJECTOR_1024, None),  # the dtypes and fill values, three each in a third of the row
        ("/kv-cache", PROJECTOR_1024, None),  # the bytes per number
    ],
    ids=["present-phone", "present-1024", "rope-1024", "masking-1024", "kv-cache-1024"],
)
def test_every_option_button_shows_whole(page, server, link, size, buttons):
    """Streamlit keeps a row of option buttons on one line and scrolls it sideways, with no bar to say so: a teacher
    on a 1024-px projector or a student on a phone never saw the options past the edge. `preload.WRAP` wraps them."""
    page.set_viewport_size(dict(zip(("width", "height"), size, strict=True)))
    open_app(page, server, link + ("&" if "?" in link else "?") + "lang=en")
    page.wait_for_function("() => document.body.dataset.attnlabBand !== undefined")
    settle(page)
    rows = page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"] button')
    assert rows.count() == buttons if buttons is not None else rows.count() >= 3
    found = []
    for i in range(rows.count()):
        rows.nth(i).scroll_into_view_if_needed()
        found += page.evaluate(CLIPPED)
    assert sorted(set(found)) == []
    assert page.evaluate(ELLIPSIZED) == []  # the presenter's Previous and Next beside the steps: whole words
