"""Run pages through Streamlit's AppTest: the real router, the real page, no browser."""

from __future__ import annotations

import re
import threading
import time
import zlib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from attnlab.testing import app_test, page_on_screen
from attnlab.ui.app.i18n import catalog
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


PIPE = re.compile(r"(?<!\\)\|")  # a cell border: a pipe not escaped


def markdown_tables(at: AppTest) -> list[list[list[str]]]:
    """Every table the page drew as markdown (`attnlab.ui.app.text.markdown_table`): rows of cells, the header row
    first, each cell as shown (markdown's escapes taken off)."""
    tables = []
    for block in (str(m.value) for m in at.markdown):
        lines = block.splitlines()
        if len(lines) < 2 or not lines[0].startswith("| ") or not set(lines[1]) <= set("|- "):
            continue
        rows = [PIPE.split(line.strip()[1:-1]) for i, line in enumerate(lines) if i != 1]
        tables.append([[re.sub(r"\\(.)", r"\1", cell.strip()) for cell in row] for row in rows])
    return tables


def metric(at: AppTest, lang: str, key: str, **fmt) -> str:
    """The value of the metric whose label is the catalog string `key` (formatted)."""
    label = catalog(lang)[key].format(**fmt) if fmt else catalog(lang)[key]
    found = [m.value for m in at.metric if m.label == label]
    assert found, (label, [m.label for m in at.metric])
    return found[0]


def finish_run(at: AppTest | None, runner, timeout: float = 120) -> AppTest | None:
    """Wait for the server's background run (`attnlab.live.Runner`) to end, then rerun `at`: the page collects it."""
    deadline = time.monotonic() + timeout
    while runner.snapshot().running and time.monotonic() < deadline:
        threading.Event().wait(0.05)
    return at.run() if at is not None else None


def forget_run(runner) -> None:
    """Wait for the server's background run to end and forget it: every AppTest session has the same id
    ("test session id"), so a later test would otherwise collect an earlier test's run as its own."""
    finish_run(None, runner)
    with runner.lock:
        runner.progress = type(runner.progress)()
        runner.finished.clear()


def one_session_per_run(runner):
    """An autouse fixture for a test module: each test starts and ends with the server's one `runner` free and
    forgotten, whatever order the tests run in (every AppTest session has the same id, see `forget_run`)."""

    @pytest.fixture(autouse=True)
    def forgotten():
        forget_run(runner)
        yield
        forget_run(runner)

    return forgotten


def assert_clean(at: AppTest) -> None:
    """No traceback reached the page."""
    assert not at.exception, [e.value for e in at.exception]


LANGS = ("en", "zh")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes `lang` runs in one language: English or Chinese, by its name, so both are tested evenly.

    Every page runs in both languages in `test_pages.py` and every key exists in both catalogs (`test_locales.py`),
    so running each behaviour twice, once per language, checked nothing those two do not.
    """
    explicit = any("lang" in str(marker.args[:1]) for marker in metafunc.definition.iter_markers("parametrize"))
    if "lang" in metafunc.fixturenames and not explicit:
        metafunc.parametrize("lang", [LANGS[zlib.crc32(metafunc.function.__name__.encode()) % 2]])
