"""The first screen first: the chart library's preload, then the Playground's first stages, the rest once one is drawn.

AppTest has no browser, so the browser's word (the page script's trigger, whose callback sets `DRAWN`) is
given here by setting the same session flag; tests/e2e/test_playground.py watches a real browser do it.
"""

from __future__ import annotations

import gc
import json

import pytest
from streamlit.testing.v1 import AppTest

from attnlab.testing import app_test
from attnlab.ui.app import first_screen
from attnlab.ui.app.first_screen import DRAWN, FIRST_SCREEN, PENDING
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.preload import plotly_module
from attnlab.ui.parts.stages import STAGES
from tests.app.charts import figures
from tests.app.conftest import assert_clean


def first_visit(**query: str) -> AppTest:
    """A new session's first run: its browser has not drawn anything yet."""
    at = app_test(drawn=False)
    at.query_params.update(query)
    return at.run()


def coming(at: AppTest, lang: str) -> bool:
    """Whether the page says the later stages are on their way."""
    line = catalog(lang)["stages.more_coming"].format(first=FIRST_SCREEN + 1, last=len(STAGES))
    return line in [str(c.value) for c in at.caption]


def signal(at: AppTest) -> list:
    """The first screen's script, if the page mounted it (the width probe, `ui.app.viewport`, is on every page)."""
    return [c for c in at.get("bidi_component") if "first_chart_drawn" in str(c.proto)]


def stage_headings(at: AppTest) -> list[str]:
    return [str(m.value) for m in at.markdown if str(m.value).startswith("#### ")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_first_run_sends_the_first_stages_and_the_rest_follows(lang):
    at = first_visit(lang=lang, text="I like you", causal="true")
    assert_clean(at)
    first = figures(at)
    assert len(first) == FIRST_SCREEN == len(stage_headings(at))
    assert coming(at, lang)
    assert PENDING in str(signal(at)[0].proto)  # what the browser tests wait on

    at.session_state[DRAWN] = True  # what the trigger's callback does once the browser has drawn a chart
    at.run()
    assert_clean(at)
    every = figures(at)
    assert len(every) == len(STAGES) == len(stage_headings(at))
    assert [json.dumps(f, sort_keys=True) for f in every[:FIRST_SCREEN]] == [
        json.dumps(f, sort_keys=True) for f in first
    ]
    assert not coming(at, lang) and not signal(at)


def test_a_change_before_the_first_chart_is_drawn_still_sends_only_the_first_screen():
    at = first_visit(text="I like you")
    at.toggle(key="lab.causal").set_value(True).run()
    assert len(figures(at)) == FIRST_SCREEN and coming(at, "en")


def test_a_comparison_sends_its_first_stage_pairs_first():
    at = first_visit(text="I like you", compare="causal")
    assert_clean(at)
    first = figures(at)
    assert coming(at, "en")
    at.session_state[DRAWN] = True
    at.run()
    every = figures(at)
    assert 0 < len(first) < len(every) and every[: len(first)] == first
    assert not coming(at, "en")


def test_every_run_opens_with_the_preload_before_any_other_element():
    at = app_test(drawn=False).run()
    for _ in range(2):  # the first run and a rerun: the element stays, so nothing below it moves
        first = at.main[0]
        assert first.type == "html" and first.proto.unsafe_allow_javascript
        assert plotly_module() in first.proto.body
        at.run()


# Pages that send a new visitor their first chart before the rest (`first_screen.hold`, issue 61), and how many charts
# the first run sends: the first screen's.
HELD = {
    "multihead": 1,  # section 1: W_Q under its heads' strip
    "cross": 2,  # the decoder's masked scores and weights
    "neuron": 2,  # q_i and K
    "decoder": 2,  # every head's map, one chart per layer
    "soft-dictionary": 2,  # the weights and the key plane
    "scaling": 1,
    "positions": 4,  # the shuffle's four
    "rope": 1,
    "masking": 1,
    "cost": 2,  # the live run's time and memory
    "tiled": 2,  # this step's tile and the full matrix
    "benchmark": 1,  # the recorded headline
}


@pytest.mark.parametrize("url_path", list(HELD))
def test_a_page_sends_a_new_visitor_its_first_chart_then_the_rest(url_path):
    at = app_test(drawn=False, url_path=url_path)
    at.query_params["lang"] = "en"
    at.run()
    assert_clean(at)
    first = figures(at)
    assert len(first) == HELD[url_path]
    assert catalog("en")["common.more_coming"] in [str(c.value) for c in at.caption] and signal(at)
    elements = len(list(at.main))
    at.session_state[DRAWN] = True  # what the trigger's callback does once the browser has drawn a chart
    at.run()
    assert_clean(at)
    every = figures(at)
    assert every[: len(first)] == first  # the same first charts, then the rest: more charts, or more elements
    assert len(every) > len(first) or len(list(at.main)) > elements
    assert catalog("en")["common.more_coming"] not in [str(c.value) for c in at.caption] and not signal(at)


def test_a_run_that_has_sent_no_chart_holds_nothing_back(tmp_path, monkeypatch):
    """The Benchmark without recorded runs has no headline chart: there is nothing to wait for, so it sends it all."""
    monkeypatch.setattr("attnlab.bench.results.DEFAULT_RESULTS_DIR", tmp_path)
    at = app_test(drawn=False, url_path="benchmark").run()
    assert_clean(at)
    assert not figures(at) and not signal(at) and at.get("multiselect")  # the controls came in the first run


def _holds_a_rest() -> None:
    """A page whose first run has sent a chart and holds the rest, which draws from the page's computed result; with
    `as_fragment` set, the fragment's own body runs instead, as the browser's request for the rest runs it."""
    import weakref

    import streamlit as st

    from attnlab.figures import palette, screen
    from attnlab.ui.app import first_screen

    class Result:
        """Stands for a page's numbers (Cross-attention's at 64 x 64 tokens: about 25 MB)."""

    def page() -> None:
        result = Result()
        st.session_state["result"] = weakref.ref(result)
        first_screen.new_run()
        first_screen.sent()
        first_screen.rest(lambda: st.write(f"the rest, from a {type(result).__name__}"))

    if st.session_state.get("as_fragment"):
        first_screen._held.__wrapped__(None, screen.band_in_use(), palette.current().name)
    else:
        page()


def test_the_rest_drawn_by_the_fragment_leaves_nothing_that_keeps_the_pages_data():
    """Streamlit keeps a fragment's call, arguments and all, for the session's life: a rest held as the fragment's
    argument kept its page's result after it was drawn, 24-26 MB an idle session at Cross-attention's largest."""
    at = AppTest.from_function(_holds_a_rest).run()
    assert_clean(at)
    assert signal(at) and at.session_state["result"]() is not None  # held until the browser asks

    at.session_state[DRAWN] = at.session_state[first_screen.DUE] = True  # the signal's callback: the browser asked
    at.session_state["as_fragment"] = True
    at.run()
    assert_clean(at)
    assert "the rest, from a Result" in [str(m.value) for m in at.markdown]
    gc.collect()
    assert at.session_state["result"]() is None
    assert first_screen.HELD not in at.session_state
