"""Run pages through Streamlit's AppTest: the real router, the real page, no browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnlab.testing import app_test
from attnlab.ui.app.i18n import catalog

ROOT = Path(__file__).resolve().parents[2]
PLAYGROUND = "views/playground.py"


def open_page(page: str = PLAYGROUND, timeout: float = 60, **query: str) -> AppTest:
    """The app as a visitor of `/<page>?<query>` gets it, after its first run (its browser has drawn a chart).

    The router's first run (on the Playground) takes the language and the shared Playground
    state from the query; the page then starts with exactly the link's own parameters.
    """
    at = app_test(timeout)
    at.query_params.update(query)
    at.run()
    if page == PLAYGROUND:
        return at
    at.query_params.clear()  # the Playground rewrote the URL without this page's keys
    at.query_params.update(query)
    return at.switch_page(page).run()


def texts(at: AppTest, kind: str) -> list[str]:
    """The message texts of one kind of element (warning, error, info, success)."""
    return [str(e.value) for e in getattr(at, kind)]


def metric(at: AppTest, lang: str, key: str, **fmt) -> str:
    """The value of the metric whose label is the catalog string `key` (formatted)."""
    label = catalog(lang)[key].format(**fmt) if fmt else catalog(lang)[key]
    found = [m.value for m in at.metric if m.label == label]
    assert found, (label, [m.label for m in at.metric])
    return found[0]


def assert_clean(at: AppTest) -> None:
    """No traceback reached the page."""
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(params=["en", "zh"])
def lang(request) -> str:
    """Each test that takes it runs in both languages."""
    return request.param
