"""Where a page's chart labels are drawn, and which of them collide: the boxes of Plotly's text in real Chromium.

`label_boxes(page)` reads, from every drawn Plotly chart on a Playwright page, the box of each label of the kinds that
must never overlap one another: the chart title (`.gtitle`), annotations and subplot titles (`.annotation-text`),
legend entries and the legend's title, axis titles (`xtitle`, `x2title`, ..., `ytitle`, ...) and colour-bar titles.
Tick labels and the numbers written in cells are not collected: a colour bar's title sits among its own tick labels by
design, and a cell's number is drawn inside its cell. A label is left out when it is empty or not rendered: zero width
or height, `display: none`, `visibility: hidden`, fully transparent, or inside a folded section (a closed expander,
an inactive tab), which `checkVisibility` reports as hidden. Boxes are in page coordinates (the scroll added), so
labels of different charts compare too.

`crowded_ticks(page)` reads each chart's x axes' tick labels written level (slanted ones stand apart by design) and
describes the neighbours less than `TICK_GAP_PX` apart on one axis: "1 2 5 10 2 5 100" in a third of a phone's chart.

`collisions(boxes, tol_px=2)` lists the pairs whose boxes overlap by more than `tol_px` in both directions;
`crowded(boxes, gap_px=4)` the pairs on one line (they share more than half the shorter one's height) with less than
`gap_px` between them, which read as one label ("k, K/V head 1k rotated, K/V head 1") without overlapping.
"""

from __future__ import annotations

TICK_GAP_PX = 2  # between two neighbouring tick labels of one axis as drawn, or they read as one number or word
KINDS = ("title", "annotation", "legend", "legend-title", "axis-title", "colorbar-title")

COLLECT = """() => {
  const kindOf = (el) => {
    const cls = el.classList;
    if (cls.contains('gtitle')) return 'title';
    if (cls.contains('annotation-text')) return 'annotation';
    if (cls.contains('legendtext')) return 'legend';
    if (cls.contains('legendtitletext')) return 'legend-title';
    if ([...cls].some(c => /^[xy][0-9]*title$/.test(c))) return 'axis-title';
    if (el.closest('.cbtitle')) return 'colorbar-title';
    return null;
  };
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  const out = [];
  charts.forEach((chart, index) => {
    if (!chart.querySelector('.main-svg')) return;
    for (const el of chart.querySelectorAll('svg text')) {
      const kind = kindOf(el);
      const text = (el.textContent || '').trim();
      if (!kind || !text) continue;
      if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true, contentVisibilityAuto: true })) continue;
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      out.push({ kind, text, x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height,
                 chart: index });
    }
  });
  return out;
}"""


CROWDED_TICKS = """(gapPx) => {
  const out = [];
  document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((chart, index) => {
    chart.querySelectorAll('.xaxislayer-above').forEach(layer => {
      const boxes = [...layer.querySelectorAll('text')]
        .filter(t => t.textContent.trim() && !(t.getAttribute('transform') || '').includes('rotate')
                     && t.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }))
        .map(t => ({ text: t.textContent, r: t.getBoundingClientRect() }))
        .filter(b => b.r.width >= 1)
        .sort((a, b) => a.r.left - b.r.left);
      for (let i = 1; i < boxes.length; i++) {
        const gap = boxes[i].r.left - boxes[i - 1].r.right;
        if (gap < gapPx) out.push(`chart ${index}: x tick labels ${JSON.stringify(boxes[i - 1].text)} and `
                                  + `${JSON.stringify(boxes[i].text)} ${gap.toFixed(1)} px apart`);
      }
    });
  });
  return out;
}"""


def crowded_ticks(page) -> list[str]:
    """Every pair of neighbouring level x tick labels of one axis less than `TICK_GAP_PX` apart, described."""
    return page.evaluate(CROWDED_TICKS, TICK_GAP_PX)


def label_boxes(page) -> list[dict]:
    """Every shown chart label of the `KINDS` on the page: dicts with kind, text, x, y, width, height (CSS px, page
    coordinates) and chart (the index of its chart among the page's Plotly charts, in document order)."""
    return page.evaluate(COLLECT)


def overlap(a: dict, b: dict) -> tuple[float, float]:
    """How far two boxes overlap across and down (0 or less where they do not)."""
    across = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    down = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return across, down


def collisions(boxes: list[dict], tol_px: float = 2) -> list[tuple[dict, dict]]:
    """The pairs of boxes that overlap by more than `tol_px` both across and down (a glyph's box has a pixel or two of
    the font's leading, so boxes that only touch are not a collision)."""
    ordered = sorted(boxes, key=lambda box: box["y"])
    found = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b["y"] >= a["y"] + a["height"] - tol_px:
                break  # sorted by top: every later box starts below this one's bottom
            across, down = overlap(a, b)
            if across > tol_px and down > tol_px:
                found.append((a, b))
    return found


def crowded(boxes: list[dict], gap_px: float = 4) -> list[tuple[dict, dict]]:
    """The pairs of boxes on one line (sharing more than half the shorter one's height) less than `gap_px` apart."""
    ordered = sorted(boxes, key=lambda box: box["x"])
    found = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b["x"] >= a["x"] + a["width"] + gap_px:
                break  # sorted by left edge: every later box starts far enough right of this one
            across, down = overlap(a, b)
            if down > min(a["height"], b["height"]) / 2 and across > -gap_px:
                found.append((a, b))
    return found


def describe(pair: tuple[dict, dict]) -> str:
    """One collision in a line: chart, kinds, texts and the overlap, for a failure message."""
    a, b = pair
    across, down = overlap(a, b)
    where = f"chart {a['chart']}" if a["chart"] == b["chart"] else f"charts {a['chart']} and {b['chart']}"
    return f"{where}: {a['kind']} {a['text']!r} x {b['kind']} {b['text']!r} ({across:.0f} x {down:.0f} px)"
