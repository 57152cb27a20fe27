"""The Benchmark page with the committed GPU record, in real Chromium: no chart label (a legend entry above all)
overlaps another, at 1400 px and on a 390-px phone, in both languages. One tab per language, laid out at one width,
then the other."""

from __future__ import annotations

import pytest

from attnlab.testing import open_app, settle
from tests.e2e.label_boxes import collisions, crowded, describe, label_boxes

pytestmark = pytest.mark.e2e

SIZES = ((1400, 1000), (390, 844))
LAID_OUT = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(el => {
  const svg = el.querySelector('.main-svg');
  const width = el.getBoundingClientRect().width;
  return !svg || width === 0 || Math.abs(Number(svg.getAttribute('width')) - width) <= 1;
})"""


def laid_out(tab) -> None:
    """Every chart drawn at its element's width (after a resize Streamlit hands Plotly the new one)."""
    tab.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done())))")
    settle(tab)
    tab.wait_for_function(LAID_OUT)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_legend_entry_overlaps_another_label_on_a_wide_screen_or_a_phone(context, server, lang):
    tab = context.new_page()
    try:
        tab.set_viewport_size(dict(zip(("width", "height"), SIZES[0], strict=True)))
        open_app(tab, server, f"/benchmark?lang={lang}")
        found = []
        for width, height in SIZES:
            tab.set_viewport_size({"width": width, "height": height})
            laid_out(tab)
            boxes = label_boxes(tab)
            legend = [b for b in boxes if b["kind"] == "legend"]
            assert len({b["chart"] for b in legend}) >= 5  # the headline, the record's three charts, its studies
            pairs = collisions(boxes) + [p for p in crowded(legend) if p not in collisions(boxes)]
            found += [f"{width} px: {describe(pair)}" for pair in pairs]
        assert found == [], "\n".join(found)
    finally:
        tab.close()
