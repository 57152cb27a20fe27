"""The Playground in a real headless Chromium: charts draw, edits propagate, links reproduce."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from attnlab.ui.app.first_screen import FIRST_SCREEN, PENDING
from attnlab.ui.app.preload import plotly_module
from attnlab.ui.parts.stages import STAGES
from tests.e2e.conftest import chart_count, chart_text, open_app, rerun, settle

pytestmark = pytest.mark.e2e


# Counts the stage charts on the page when the first one is drawn (before any reply to the browser's signal).
CHARTS_AT_FIRST_DRAW = """
new MutationObserver((_, observer) => {
  if (document.querySelector('[data-testid="stPlotlyChart"] .main-svg')) {
    window.chartsAtFirstDraw = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""
NUMBER = re.compile(r"[−-]?\d+(\.\d+)?")


def numbers(text: str) -> list[str]:
    """The numbers among a chart's texts, in order: what a link must reproduce whatever the language."""
    return [piece for piece in text.split("|") if NUMBER.fullmatch(piece)]


HEAVY = ("DataFrame.", "StreamlitSyntaxHighlighter.")  # ~3 MB of scripts a first visit used to parse before its chart


def test_a_visitors_first_minute_first_screen_then_all_a_change_an_edit_a_shared_link_a_trip_and_a_token(
    page, context, server
):
    """One visitor's first minutes on the Playground, in the order a person meets them (one page load of the
    Playground for all of it: each was its own load before).

    The chart library is fetched while a page without charts shows, and not again for the Playground; the first
    chart is drawn while only the first screen's stages are on the page, the rest follow without a click; no data
    grid or code highlighter is loaded; the check against PyTorch passes and `causal=1` masks. A widget change
    redraws and rewrites the link; an edited weight cell changes the charts and the link; the share box gives that
    link, which another session opens in Chinese to the same matrices, the edit included. A trip to a page of another
    section and back keeps the text, the settings and the edit; a token chip then opens that token in the Neuron view.
    """
    module = plotly_module()
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url.rsplit("/", 1)[-1]))
    page.add_init_script(CHARTS_AT_FIRST_DRAW)
    open_app(page, server, "/lessons")  # a page that draws no chart at all
    assert chart_count(page) == 0
    loaded = "m => performance.getEntriesByType('resource').some(r => r.name.endsWith('/' + m) && r.responseEnd > 0)"
    page.wait_for_function(loaded, arg=module, timeout=30_000)
    fetched.clear()
    open_app(page, server, "/?text=I+like+you&d_model=6&heads=3&causal=1")
    assert page.evaluate("window.chartsAtFirstDraw") == FIRST_SCREEN
    assert chart_count(page) == len(STAGES) and fetched.count(module) == 1  # the preload and the charts share it
    assert page.locator(f"[{PENDING}]").count() == 0
    assert page.get_by_text("follow as soon as your browser").count() == 0
    heavy = [name for name in fetched if name.endswith(".js") and name.startswith(HEAVY)]
    assert not heavy, heavy
    assert page.get_by_test_id("stAlertContentSuccess").get_by_text("Matches PyTorch").is_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "−∞" in chart_text(page, 6)  # the mask stage draws blocked cells as −∞
    before = chart_text(page, 7)
    rerun(page, lambda: page.get_by_text("Causal mask").click())
    assert "causal=false" in page.url and "lang=en" in page.url
    assert chart_text(page, 7) != before and "−∞" not in chart_text(page, 6)

    q_before, out_before = chart_text(page, 1), chart_text(page, 10)
    rerun(page, page.get_by_text("Edit the weights").click)  # the editor is built when its switch is on
    grid = page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').first
    grid.get_by_test_id("glide-cell-0-0").focus()  # keyboard focus on the grid: the cursor starts on row d0's label
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # column d1
    page.keyboard.press("Enter")  # open the cell's editor
    editor = page.locator("textarea.gdg-input, input.gdg-input").first
    editor.fill("2.5")
    rerun(page, lambda: editor.press("Enter"))
    assert "edits=q0.1%3D2.5" in page.url or "edits=q0.1=2.5" in page.url
    assert chart_text(page, 1) != q_before
    assert chart_text(page, 10) != out_before
    edited = chart_text(page, 10)

    rerun(page, page.get_by_text("Share this view").click)
    link = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').inner_text()
    assert "text=I%20like%20you" in link and "causal=false" in link and link.startswith(server)
    assert "edits=q0.1" in link
    receiver = context.new_page()  # another session: a student opening the link, in Chinese
    open_app(receiver, server, link.removeprefix(server).replace("lang=en", "lang=zh"))
    for index in (0, 4, 7, 10):  # the same numbers in every cell and tick (the titles are in Chinese)
        shown = numbers(chart_text(receiver, index))
        assert len(shown) >= 9 and shown == numbers(chart_text(page, index))
    assert receiver.get_by_text("注意力实验台").is_visible() and "lang=zh" in receiver.url
    receiver.close()

    page.get_by_text("Lessons", exact=True).click()
    page.get_by_text("Lessons overview", exact=True).click()  # a page of another section, and one without charts
    page.wait_for_url("**/lessons**")
    settle(page)
    page.get_by_text("Explore", exact=True).click()
    page.get_by_text("Playground", exact=True).click()
    page.wait_for_url(lambda url: "/lessons" not in url)
    settle(page)
    assert page.locator('[data-testid="stTextInput"] input').first.input_value() == "I like you"
    assert "d_model=6" in page.url and "heads=3" in page.url and "causal=false" in page.url
    assert "edits=q0.1" in page.url and chart_text(page, 10) == edited  # the edit came back too
    assert chart_count(page) == 11
    chip = page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"] button').filter(has_text="like").first
    rerun(page, chip.click)
    rerun(page, page.locator('[data-testid="stPageLink-NavLink"]').filter(has_text="Neuron").first.click)
    assert "/neuron" in page.url and "q=1" in page.url and "text=I+like+you" in page.url and "d_model=6" in page.url
    assert "Query like (position 1)" in page.locator('[data-testid="stMain"]').inner_text()
    assert chart_count(page) == 5 and page.locator('[data-testid="stException"]').count() == 0


# Per heatmap chart: whether Plotly measured its axes' labels (automargin), and every text it drew (tick and colour-bar
# labels, titles, cells) that reaches past the chart's own box, by more than a pixel of rounding.
CLIPPED = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(gd => gd.data.some(trace => trace.type === 'heatmap') && (gd.layout.margin || {}).l !== undefined)
  .map(gd => {
    const box = gd.getBoundingClientRect();
    const out = [...gd.querySelectorAll('svg.main-svg text')].filter(text => {
      const r = text.getBoundingClientRect();
      return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1);
    });
    return {automargin: gd._fullLayout.xaxis.automargin, clipped: out.map(text => text.textContent)};
  })"""


def first_chart_trigger(message: bytes | str) -> bool:
    """Whether a message from the page is the rerun that carries the signal "a chart is drawn, send the rest"."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    if not isinstance(message, bytes):
        return False
    msg = BackMsg.FromString(message)
    if msg.WhichOneof("type") != "rerun_script":
        return False
    states = msg.rerun_script.widget_states.widgets
    return any("first_chart_signal" in w.id and w.WhichOneof("value") == "json_trigger_value" for w in states)


@pytest.mark.slow
def test_when_the_request_for_the_rest_is_lost_the_page_asks_again(context, server):
    """The first screen's request for the other stages, dropped on its way to the server (as when it went astray
    among the page's other reruns), is sent again once the page has been idle a while: the rest still comes."""
    tab = context.new_page()
    dropped: list[bytes] = []

    def route(ws) -> None:
        to_server = ws.connect_to_server()

        def from_page(message: bytes | str) -> None:
            if not dropped and first_chart_trigger(message):
                dropped.append(message)  # the first request never arrives
            else:
                to_server.send(message)

        ws.on_message(from_page)

    try:
        tab.route_web_socket(re.compile(r".*/_stcore/stream"), route)
        open_app(tab, server, "/?text=I+like+you&lang=en")
        assert len(dropped) == 1  # the first request was lost, and the page still drew every stage
        assert chart_count(tab) == len(STAGES) and tab.locator(f"[{PENDING}]").count() == 0
    finally:
        tab.close()


@pytest.mark.slow
def test_heatmap_labels_fit_the_margins_written_for_them_so_plotly_need_not_measure_them(page, server):
    """The app writes each heatmap's margins from its labels (`figures.margins`) and turns Plotly's automargin off
    where it can bound every label's width, which spares Plotly measuring them in the browser and drawing the chart
    again. Checked in Chromium with the widest labels the Playground takes: Chinese, capitals, escaped HTML, curly
    quotes (a full em in Noto Sans CJK), accents, a 16-character cut, and more than 8 tokens, so that column labels
    slant: no text any chart draws reaches past the chart."""
    tokens = ["注意力机制", "M" * 20, "<b>x</b>", "“Wow”", "的", "Œuvre", "naïve", "you", "need", "&amp;", "42", "W"]
    text = "+".join(quote(token) for token in tokens)
    open_app(page, server, f"/?lang=zh&d_model=8&heads=2&text={text}")
    charts = page.evaluate(CLIPPED)
    assert len(charts) >= len(STAGES) - 1  # every stage chart but the heads strip
    assert all(chart["automargin"] is False for chart in charts), charts
    assert [chart["clipped"] for chart in charts] == [[]] * len(charts)
