"""Run pages through Streamlit's AppTest: the real router, the real page, no browser."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from attnlab.testing import app_test, page_on_screen
from attnlab.ui.app.i18n import LANGS, catalog
from attnlab.ui.app.registry import PAGES

ROOT = Path(__file__).resolve().parents[2]
PLAYGROUND = "views/playground.py"


def open_page(page: str = PLAYGROUND, timeout: float = 60, **query: str) -> AppTest:
    """The app as a visitor of `/<page>?<query>` gets it: that page on the first run (its browser has drawn a chart)."""
    spec = next(spec for spec in PAGES if spec.path == page)
    at = app_test(timeout, url_path=spec.url_path)
    at.query_params.update(query)
    at.run()
    assert page_on_screen(at) == calc_hash(spec.url_path), f"AppTest drew another page than {page}"
    return at


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes `lang` runs once, in English or in Chinese by a stable hash of its name.

    Across the suite both languages walk every kind of page state at the cost of one; tests/app/test_pages.py
    opens every page in both, and tests/unit/test_locales.py checks both have every key with the same fields.
    A test that parametrizes `lang` itself keeps its own list.
    """
    own = any(m.name == "parametrize" and "lang" in str(m.args[0]) for m in metafunc.definition.iter_markers())
    if "lang" in metafunc.fixturenames and not own:
        metafunc.parametrize("lang", [LANGS[zlib.crc32(metafunc.definition.name.encode()) % len(LANGS)]])
