"""Every chart legible on a phone and a projector: no two chart labels collide on any page, in either language, no
formula on a phone runs past its column, and each presenter step's chart is on the projector's first screen (issue 54).

One server and one tab for the whole module: English at 1280 x 720, then at 390 x 844, then Chinese likewise. A link
is opened as its own visit (`page.goto`, a new session) only where the page must read it fresh (a language's first
link, and the Playground and the presenter, whose state a session reads once); every other page is reached as the
browser's Back button reaches one, a history entry and a `popstate`, which Streamlit serves as a new page run of the
same session: the frontend, Plotly and the fonts stay loaded, and the session already knows its width, so a page
costs one run and one drawing. The tab shrinks on a page that is on screen, which then reports its width and is run
again (`attnlab.ui.app.viewport`); each wait is on what the page says (its width measured, no rerun pending,
every chart drawn at its element's width).
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from attnlab.links.bench import BENCH_FOLDS
from attnlab.links.explore import CROSS_SECTIONS, MULTIHEAD_SECTIONS
from attnlab.links.lm import SECTIONS as LM_SECTIONS
from attnlab.testing import rerun, serve_app, settle, watch
from attnlab.ui.app.registry import PAGES
from tests.e2e.conftest import HAVE_CHROMIUM, _no_browser
from tests.e2e.label_boxes import collisions, crowded, crowded_ticks, describe, label_boxes

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PHONE, PROJECTOR = (390, 844), (1280, 720)
MODERN = "/?text=" + quote("<BOS> 我 喜欢 你 ， 你 也 喜欢 我 <EOS>").replace("%20", "+")
MODERN += "&heads=4&kv_heads=2&rope=half&mask=window&window=3&d_model=16"
DEFAULTS = ["/" + spec.url_path for spec in PAGES]  # every registered page's default link, new pages too
# Pages whose later sections wait folded until opened (issue 61), with every one open: the charts of the default link
# and those of its folded sections, laid out as the default link lays them out
OPENED = {
    "/multihead": "/multihead?open=" + ",".join(MULTIHEAD_SECTIONS),
    "/cross": "/cross?open=" + ",".join(CROSS_SECTIONS),
    "/lm": "/lm?open=" + ",".join(LM_SECTIONS),
    "/kv-cache": "/kv-cache?open=mla",
    "/benchmark": "/benchmark?open=" + ",".join(BENCH_FOLDS),
}
# the Playground's two first: a size is changed on a lighter page
LINKS = [DEFAULTS[0], MODERN, *(OPENED.get(link, link) for link in DEFAULTS[1:])]
PRESENTER = "/present?text=%3CBOS%3E+I+like+you+%3CEOS%3E&heads=2&kv_heads=1&rope=half"
# The same options with tokens that are HTML ("<img", "src=x>", "<b>hi</b>"): every step must write them as text.
HOSTILE_PRESENTER = PRESENTER.replace("I+like+you", "%3Cimg+src%3Dx%3E+%3Cb%3Ehi%3C%2Fb%3E+you")
PLAYGROUND_STATE = ("/?", "/playground", "/present")  # read once per session: opened as a new visit
CHART_SHOWN_PX = 200  # of a step's first chart, at least this much is above the projector's bottom edge
PHONE_BAND = 340  # the chart width band a 390-px phone's page reports (`figures.screen.BANDS`)
# Pages whose legends the tour must find, so that a check of none cannot pass: the number of charts with a legend on
# the default link. The Benchmark's: the recorded GPU run's headline, its three charts and its two studies (issue 50).
LEGENDS = {OPENED["/benchmark"]: 5}

LAID_OUT = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(el => {
  const svg = el.querySelector('.main-svg');
  const width = el.getBoundingClientRect().width;
  return !svg || width === 0 || Math.abs(Number(svg.getAttribute('width')) - width) <= 1;
})"""
FORMULA_SLACK_PX = 4  # KaTeX's struts overhang a display formula's box by 2 px in Chromium, whatever its width
WIDE_FORMULAS = """slack => [...document.querySelectorAll('[data-testid="stMain"] .katex-display')]
  .filter(box => box.checkVisibility() && box.scrollWidth > box.clientWidth + slack)
  .map(box => `${box.scrollWidth} px in ${box.clientWidth}: ${box.querySelector('annotation')?.textContent}`)"""
FIRST_CHART_TOP = """() => {
  const chart = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"]');
  return chart ? chart.getBoundingClientRect().top + window.scrollY : null;
}"""


@pytest.fixture(scope="module")
def labels_server():
    """A server of this module's own: its tour does not wait on the other browser tests' server, nor they on it."""
    if not HAVE_CHROMIUM:
        _no_browser()
    with serve_app(".e2e-labels-server.log") as served:
        yield served.url


@pytest.fixture(scope="module")
def tour(context):
    """One tab for the module (a background tab gets no animation frames), the language its session speaks and its
    size."""
    tab = context.new_page()
    watch(tab)
    yield {"tab": tab, "lang": None, "size": PROJECTOR}
    tab.close()


def with_lang(link: str, lang: str) -> str:
    return f"{link}{'&' if '?' in link else '?'}lang={lang}"


def resize(tour: dict, size: tuple[int, int]) -> None:
    """The tab at another size. A page on screen when it shrinks reports its new band and is run again for it (the
    probe at work); a new visit at a phone's size starts as a desktop's (the test browser does not call itself a
    phone) and is run again for its band likewise."""
    tab = tour["tab"]
    tab.set_viewport_size(dict(zip(("width", "height"), size, strict=True)))
    tour["size"] = size
    if size == PHONE and tab.url.startswith("http"):
        laid_out(tab)
        assert tab.evaluate("() => document.body.dataset.attnlabBand") == str(PHONE_BAND)


def visit(tour: dict, server: str, lang: str, link: str, size: tuple[int, int] = PROJECTOR):
    """The link at `size` in the module's tab, settled: within the session as Back reaches a page, or, for another
    language or the Playground's state (read once per session), as a new visit."""
    tab = tour["tab"]
    if size != tour["size"]:
        resize(tour, size)
    url = with_lang(link, lang)
    if tour["lang"] == lang and link != "/" and not link.startswith(PLAYGROUND_STATE):
        go = f"() => {{ history.pushState(null, '', {url!r}); dispatchEvent(new PopStateEvent('popstate')); }}"
        rerun(tab, lambda: tab.evaluate(go))
    else:
        tab.goto(server + url)
        settle(tab)
        tour["lang"] = lang
    laid_out(tab)
    return tab


def laid_out(tab) -> None:
    """Wait until the page has measured its width, any rerun that asked for has drawn, and every chart is drawn at its
    element's width (after a resize, Streamlit hands Plotly the new one)."""
    tab.wait_for_function("() => document.body.dataset.attnlabBand !== undefined")
    tab.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done())))")
    settle(tab)
    tab.wait_for_function(LAID_OUT)


def clashes(boxes: list[dict]) -> list[str]:
    """Every pair of chart labels that overlap, or sit on one line with no gap, described."""
    pairs = collisions(boxes)
    pairs += [pair for pair in crowded(boxes) if pair not in pairs]
    return [describe(pair) for pair in pairs]


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("size", [PROJECTOR, PHONE], ids=["1280x720", "390x844"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_two_chart_labels_collide_on_a_projector_or_a_phone(tour, labels_server, lang, size, link):
    tab = visit(tour, labels_server, lang, link, size)
    boxes = label_boxes(tab)
    found = clashes(boxes) + crowded_ticks(tab)
    assert found == [], f"{with_lang(link, lang)} at {size[0]} x {size[1]}\n" + "\n".join(found)
    assert len({box["chart"] for box in boxes if box["kind"] == "legend"}) >= LEGENDS.get(link, 0)
    if size == PHONE:  # every formula whole on screen: none cut at the column's edge, its rest a swipe away
        assert tab.evaluate(WIDE_FORMULAS, FORMULA_SLACK_PX) == [], with_lang(link, lang)
    assert tab.locator('[data-testid="stException"]').count() == 0  # and no page, in either language, fails


@pytest.mark.parametrize(
    ("lang", "link", "steps"), [("en", HOSTILE_PRESENTER, tuple(range(1, 12))), ("zh", PRESENTER, (5, 6, 8))]
)
def test_every_presenter_steps_chart_is_on_the_projectors_first_screen(tour, labels_server, lang, link, steps):
    """The issue's options (questions off) at 1280 x 720 with the sidebar as the presenter leaves it. In English, every
    step, reached with Next as a teacher goes on, on tokens that are HTML, which each step's chart writes as text; in
    Chinese, on the issue's tokens, the steps with the most above their chart (RoPE's rotation, two formulas' lines)."""
    tab = visit(tour, labels_server, lang, link + f"&quiz=false&step={steps[0]}")
    found = []
    for k in steps:
        if k != steps[0] and lang == "en":
            rerun(tab, tab.get_by_role("button", name="Next").first.click)
            laid_out(tab)
        elif k != steps[0]:
            picker = tab.locator('[data-testid="stMain"] [data-testid="stButtonGroup"]').first
            rerun(tab, picker.locator("button").nth(k - 1).click)  # step k's button
            laid_out(tab)
        assert f"step={k}" in tab.url and tab.locator('[data-testid="stException"]').count() == 0
        if lang == "en":
            assert tab.get_by_text(f"Step {k} of 11").first.is_visible()
            assert tab.locator('[data-testid="stMain"] img[src=x]').count() == 0  # a token is text, never HTML
            assert "<b>" in tab.locator('[data-testid="stPlotlyChart"]').first.inner_text()
        top = tab.evaluate(FIRST_CHART_TOP)
        if top is None or top > PROJECTOR[1] - CHART_SHOWN_PX:
            found.append(f"step {k}: the first chart starts at {top} px")
        found += [f"step {k}: {clash}" for clash in clashes(label_boxes(tab))]
    assert found == [], "\n".join(found)
    assert lang != "en" or tab.get_by_role("button", name="Next").first.is_disabled()  # the last step


def test_a_presenter_question_stays_on_screen_with_the_chart_it_reveals(tour, labels_server):
    """Step 8 asks two questions before the weights: both, then the chart once revealed, fit the first screen."""
    tab = visit(tour, labels_server, "en", PRESENTER + "&quiz=true&step=8")
    assert tab.evaluate(FIRST_CHART_TOP) is None  # hidden until answered
    for _ in range(2):
        form = tab.locator('[data-testid="stForm"]').first
        assert form.bounding_box()["y"] < PROJECTOR[1] - 100, "a question's form starts below the first screen"
        rerun(tab, form.get_by_role("button", name="Just show it").click)
    laid_out(tab)
    prompts = tab.locator('[data-testid="stMain"] h5')
    assert prompts.count() == 2 and all(prompts.nth(i).bounding_box()["y"] >= 0 for i in range(2))
    top = tab.evaluate(FIRST_CHART_TOP)
    assert top is not None and top <= PROJECTOR[1] - CHART_SHOWN_PX, f"the revealed chart starts at {top} px"
    assert clashes(label_boxes(tab)) == []
