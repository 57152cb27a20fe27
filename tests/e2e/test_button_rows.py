"""Rows of option buttons in Chromium: every option shows whole, on a line of its own where the row is too narrow."""

from __future__ import annotations

import pytest

from attnlab.testing import settle
from tests.e2e.conftest import open_app

pytestmark = pytest.mark.e2e

PHONE, PROJECTOR_1024 = (390, 844), (1024, 768)
# Each button of the page's option rows, in the window, with an end that shows something else: cut off by a row that
# scrolls sideways (the fixed header over the window's top is not the row's doing)
CLIPPED = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stButtonGroup"] button')]
  .filter(b => { const r = b.getBoundingClientRect(), y = r.y + r.height / 2;
    const header = document.querySelector('[data-testid="stHeader"]');
    return y > 0 && y < innerHeight && [r.left + 3, r.right - 3].map(x => document.elementFromPoint(x, y))
      .some(hit => !b.contains(hit) && !(header && header.contains(hit))); })
  .map(b => b.innerText)"""
# The page's buttons whose label is cut short with an ellipsis: some part of the button is wider than it shows
ELLIPSIZED = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stButton"] button')]
  .filter(b => [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)).map(b => b.innerText)"""


PRESENTER = "/present?text=I+like+you&heads=4&step=5&quiz=false"


@pytest.mark.parametrize(
    ("link", "size", "options"),
    [
        (PRESENTER, PHONE, 11 + 5),  # the steps, all heads and four
        (PRESENTER, PROJECTOR_1024, 11 + 5),  # and Previous and Next beside the steps
        ("/masking", PROJECTOR_1024, 6),  # the dtypes and fill values, three each in a third of the row
        ("/cost", PROJECTOR_1024, 0),  # Measure again beside three sizes
        pytest.param("/rope", PROJECTOR_1024, 2, marks=pytest.mark.slow),  # the pairing's two long names
        pytest.param("/kv-cache", PROJECTOR_1024, 3, marks=pytest.mark.slow),  # the bytes per number
        pytest.param("/tiled", PROJECTOR_1024, 0, marks=pytest.mark.slow),  # Previous and Next beside the slider
        pytest.param("/decoder", (1280, 720), 0, marks=pytest.mark.slow),  # Draw a random sequence
        pytest.param("/lm", PROJECTOR_1024, 0, marks=pytest.mark.slow),  # Next character
    ],
    ids=lambda v: (
        v.strip("/").split("?")[0] if isinstance(v, str) else "x".join(map(str, v)) if isinstance(v, tuple) else None
    ),
)
def test_every_option_and_button_label_shows_whole(page, server, link, size, options):
    """Streamlit keeps a row of option buttons on one line and scrolls it sideways, with no bar to say so, and cuts a
    button's label short with an ellipsis: a teacher on a 1024-px projector or a student on a phone never saw the
    options past the edge, nor read "Mea..." as Measure again. `preload.WRAP` wraps both; the columns leave room for
    each label's longest word."""
    page.set_viewport_size(dict(zip(("width", "height"), size, strict=True)))
    open_app(page, server, link + ("&" if "?" in link else "?") + "lang=en")
    page.wait_for_function("() => document.body.dataset.attnlabBand !== undefined")
    settle(page)
    rows = page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"] button')
    assert rows.count() >= options
    found = []
    for i in range(rows.count()):
        rows.nth(i).scroll_into_view_if_needed()
        found += page.evaluate(CLIPPED)
    assert sorted(set(found)) == []
    assert page.evaluate(ELLIPSIZED) == []
