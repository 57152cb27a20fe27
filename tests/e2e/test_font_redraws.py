"""No chart is drawn again for a font face charts do not use, in a real Chromium (`attnlab.ui.app.preload`).

Plotly waits on the faces that loaded while it drew a chart, then draws the chart again; on a phone the Playground's
formulas loaded their faces beside nine of its charts on every visit. The page's script keeps those faces out of what
Plotly reads.
"""

from __future__ import annotations

import pytest

from attnlab.testing import PHONE
from attnlab.ui.parts.stages import STAGES
from tests.e2e.conftest import chart_count, no_exception, open_app

pytestmark = pytest.mark.e2e
# Plotly reads `loaded` of every face it waits on before it draws a chart again; nothing else in the page reads it.
WAITS = """
window.fontWaits = [];
const loaded = Object.getOwnPropertyDescriptor(FontFace.prototype, 'loaded');
Object.defineProperty(FontFace.prototype, 'loaded', {
  configurable: true,
  get() {
    window.fontWaits.push(this.family);
    return loaded.get.call(this);
  },
});
"""
LISTED = "() => [...document.fonts].map(face => face.family)"  # what Plotly reads
HELD = "() => { const out = []; document.fonts.forEach(face => out.push(face.family)); return out; }"


def test_no_playground_chart_is_drawn_again_for_its_formulas_fonts(page, server):
    page.add_init_script(WAITS)
    page.set_viewport_size(PHONE["viewport"])  # a 390 x 844 phone's window
    open_app(page, server, "/?text=%3CBOS%3E+I+like+you+%3CEOS%3E&causal=true")  # a formula beside every chart
    assert no_exception(page) and chart_count(page) == len(STAGES)
    assert page.evaluate("window.fontWaits") == []
    listed, held = page.evaluate(LISTED), page.evaluate(HELD)
    assert "Source Sans" in listed  # the body font, which a themed chart draws in, is still waited on
    assert not [family for family in listed if family.startswith(("KaTeX_", "Source Code Pro"))]
    assert [family for family in held if family.startswith("KaTeX_")]  # the set itself still holds every face
