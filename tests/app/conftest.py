"""Run pages through Streamlit's AppTest: the real router, the real page, no browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PLAYGROUND = "views/playground.py"


def open_page(page: str = PLAYGROUND, timeout: float = 60, **query: str) -> AppTest:
    """The app as a visitor of `/<page>?<query>` gets it, after its first run."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if page == PLAYGROUND:
        at.query_params.update(query)
        return at.run()
    if "lang" in query:
        at.query_params["lang"] = query["lang"]
    at.run()  # the router registers the pages; the session takes the language
    for name in list(at.query_params):
        del at.query_params[name]
    at.query_params.update(query)
    return at.switch_page(page).run()


def texts(at: AppTest, kind: str) -> list[str]:
    """The message texts of one kind of element (warning, error, info, success)."""
    return [str(e.value) for e in getattr(at, kind)]


def assert_clean(at: AppTest) -> None:
    """No traceback reached the page."""
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(params=["en", "zh"])
def lang(request) -> str:
    """Each test that takes it runs in both languages."""
    return request.param
