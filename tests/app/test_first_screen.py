"""The first screen first: the chart library's preload, then the Playground's first stages, the rest once one is drawn.

AppTest has no browser, so the browser's word (the page script's trigger, whose callback sets `DRAWN`) is
given here by setting the same session flag; tests/e2e/test_playground.py watches a real browser do it.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from attnlab.testing import app_test
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
