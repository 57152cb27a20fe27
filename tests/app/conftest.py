"""Run pages through Streamlit's AppTest: the real router, the real page, no browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def open_page(page: str = "pages/playground.py", timeout: float = 60, **query: str) -> AppTest:
    """The app as a visitor of `/<page>?<query>` gets it, after its first run."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    if page != "pages/playground.py":
        at.switch_page(page).run()
    return at


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
