"""The character widths `figures.margins` bounds, measured again in Chromium in each font a chart's labels can get."""

from __future__ import annotations

import pytest

from attnlab.figures.margins import _measured, em_width
from attnlab.figures.prebuilt import BASE_LAYOUT

pytestmark = pytest.mark.e2e

SAMPLES = [  # Latin, the punctuation it bounds, and a sample of every CJK block it takes (ideographs, kana, Hangul)
    *range(0x20, 0x7F),
    *range(0xA0, 0x250),
    *range(0x2010, 0x2030),
    0x2212,
    0x221E,
    *range(0x3000, 0x3100),
    *range(0x4E00, 0x4E80),
    *range(0xAC00, 0xAC40),
    *range(0xFF01, 0xFF70),
]
FONTS = [*(f.strip() for f in BASE_LAYOUT["font"]["family"].split(",")), "DejaVu Sans", "Liberation Sans", "Arial"]
WIDTHS = """([chars, fonts]) => {
  const ctx = document.createElement('canvas').getContext('2d');
  return fonts.map(font => {
    ctx.font = `100px "${font}", sans-serif`;
    return chars.map(ch => ctx.measureText(ch).width / 100);
  });
}"""


def test_every_character_the_margins_bound_is_no_wider_than_its_bound_in_any_font(page):
    """A margin written from `em_width` must hold its label however the browser draws it: each character `bounded`
    takes is measured in the chart's fonts and the usual fallbacks (a font a machine lacks falls back in turn)."""
    chars = [chr(c) for c in SAMPLES if _measured(chr(c)) and chr(c) != "\u200b"]
    assert len(chars) > 600  # Latin letters and CJK are bounded; the sample is not empty by mistake
    widths = page.evaluate(WIDTHS, [chars, FONTS])
    over = [
        (font, ch, round(width, 3), em_width(ch))
        for font, row in zip(FONTS, widths, strict=True)
        for ch, width in zip(chars, row, strict=True)
        if width > em_width(ch) + 1e-6
    ]
    assert over == []
