"""A real `streamlit run` on a free localhost port, driven by Playwright in Debian's headless Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import plotly
import pytest

from attnlab.live import HOLD_ENV
from attnlab.testing import BROWSER_ARGS, PATIENCE_MS, ROOT, open_app, rerun, serve_app, settle

__all__ = ["ROOT", "open_app", "rerun", "serve_app", "settle"]

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
HAVE_CHROMIUM = Path(CHROMIUM).exists()
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"  # the plotly.js plotly.py ships

pytestmark = pytest.mark.e2e


# start servers of their own (replicas behind nginx; the label tour's, issue 54), not the shared one: the other worker
# runs them, beside the shared server's long chain
OWN_SERVERS = {"test_replicas.py", "test_chart_labels.py"}
FIRST = "test_deep_links.py"  # needs a server nobody has visited: taken first, it gets the shared one unvisited


@pytest.hookimpl(tryfirst=True)  # before xdist turns the group marks into node ids, whenever this file was loaded
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests first, in two xdist groups (`--dist loadgroup` in pyproject.toml).

    One worker runs the tests of the shared server against it and one browser profile, warm from the first test on;
    the first of them is the one that needs a server no one has visited yet. The replica test, which starts servers
    of its own behind nginx, is a group of its own, which the other worker takes first and then goes on with the
    rest. Collected last (tests/e2e sorts after tests/app), the browser tests began only once the AppTest files had
    been handed out. Splitting the shared server's tests into two groups took as long in all (both chains then share
    the 2 cores) and made the timing-sensitive ones (a live run polled to its end, a second tab while the first
    runs) flakier. Named on the command line (`pytest tests/e2e/...`), this file is loaded before xdist's worker
    plugin instead of after it, and its marks came too late: the tests were spread over both workers, each with its
    own server and browser.
    """
    browser = [item for item in items if item.get_closest_marker("e2e")]
    for item in browser:
        item.add_marker(pytest.mark.xdist_group("own-servers" if item.path.name in OWN_SERVERS else "browser"))
    browser.sort(key=lambda item: item.path.name != FIRST)  # stable: the rest keep their order
    items[:] = browser + [item for item in items if not item.get_closest_marker("e2e")]


def _no_browser() -> None:
    """Skip with the reason; in CI (CI=true) a missing browser is a failure, not a skip."""
    message = f"no Chromium at {CHROMIUM}; install Debian's chromium to run the browser tests"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


_SHARED: dict[str, bool] = {"visited": False}


@pytest.fixture(scope="session")
def hold_file(tmp_path_factory) -> Path:
    """While this file exists, the shared server's live runs stay going after their last step (`attnlab.live`)."""
    return tmp_path_factory.mktemp("live") / "hold"


@pytest.fixture(scope="session")
def shared_server(hold_file) -> str:
    """Base URL of the app served by `streamlit run app.py` for the whole test session."""
    if not HAVE_CHROMIUM:
        _no_browser()
    with serve_app(env={**os.environ, HOLD_ENV: str(hold_file)}) as served:
        yield served.url


@pytest.fixture
def server(shared_server) -> str:
    """The shared server, for a test that does not mind what earlier tests did there."""
    _SHARED["visited"] = True
    return shared_server


@pytest.fixture
def hold(server, hold_file):
    """Hold the shared server's live runs going after their last step; call the value to let them end.

    A test that needs a run going (a second tab pressing Run, a page that must poll to the end) then does not race
    the run's own length, whatever the machine's speed; the hold is let go when the test ends, passed or not.
    """
    hold_file.touch()
    yield lambda: hold_file.unlink(missing_ok=True)
    hold_file.unlink(missing_ok=True)


@pytest.fixture
def fresh_server(request) -> str:
    """A server no browser has visited yet: the shared one while no test has used it, else one of its own."""
    if not _SHARED["visited"]:
        _SHARED["visited"] = True
        yield request.getfixturevalue("shared_server")
        return
    with serve_app(".e2e-fresh-server.log") as served:
        yield served.url


# One renderer process for every tab of the shared profile: a tab then reuses the scripts V8 has already compiled
# (Streamlit's frontend, Plotly), which halves a page load's main-thread time here. Chromium shares a renderer
# only within a persistent profile, so the shared context is one.
SHARED_RENDERER = ["--process-per-site", "--renderer-process-limit=1", "--disable-site-isolation-trials"]
# V8 without its top tier (TurboFan; Maglev is the highest it goes): a test's scripts run for seconds, too briefly for
# TurboFan's compiles to pay for themselves, and the browser chain used 5 to 10 % less CPU without them. Only the
# test browser: the budget scripts time the browser as visitors have it (`attnlab.testing.BROWSER_ARGS`).
TEST_V8 = ["--js-flags=--max-opt=2"]


@pytest.fixture(scope="session")
def playwright_driver():
    """Playwright's driver for the session (the shared profile below starts from it when a test needs a browser)."""
    if not HAVE_CHROMIUM:
        _no_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def context(playwright_driver, tmp_path_factory):
    """One browser profile for the session, as a returning visitor has: the frontend's scripts come from its cache."""
    shared = playwright_driver.chromium.launch_persistent_context(
        tmp_path_factory.mktemp("profile"),
        executable_path=CHROMIUM,
        args=BROWSER_ARGS + SHARED_RENDERER + TEST_V8,
        viewport={"width": 1400, "height": 1000},
    )
    shared.set_default_timeout(PATIENCE_MS)  # a click or a locator's wait on a loaded machine: the waits' one cap
    yield shared
    shared.close()


@pytest.fixture
def page(context):
    """A fresh tab (its own Streamlit session) per test."""
    tab = context.new_page()
    yield tab
    tab.close()


# Whatever is wider than it shows: the page, its main column, its content (a phone must not scroll sideways)
SIDEWAYS = """() => [document.documentElement, document.querySelector('[data-testid="stMain"]'),
  document.querySelector('[data-testid="stMainBlockContainer"]')].filter(el => el.scrollWidth > el.clientWidth)
  .map(el => `${el.getAttribute('data-testid') || 'document'}: ${el.scrollWidth} > ${el.clientWidth}`)"""


def chart_count(tab) -> int:
    """How many Plotly charts have drawn (a chart holds several SVG layers; count charts)."""
    return tab.locator('[data-testid="stPlotlyChart"]:has(.main-svg)').count()


def chart_text(tab, index: int) -> str:
    """All text Plotly drew in one chart (ticks, legend, the numbers written in cells)."""
    return (
        tab.locator('[data-testid="stPlotlyChart"]')
        .nth(index)
        .evaluate("el => Array.from(el.querySelectorAll('svg text')).map(t => t.textContent).join('|')")
    )


def main_text(tab) -> str:
    """Everything the main column says, as text."""
    return tab.locator('[data-testid="stMain"]').inner_text()


def no_exception(tab) -> bool:
    """No traceback box on the page."""
    return tab.locator('[data-testid="stException"]').count() == 0


def metric_value(tab, label: str) -> str:
    """The value shown under the metric whose label contains `label`."""
    box = tab.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


@pytest.fixture(scope="module")
def plotly_tab(context):
    """One blank tab with the plotly.js plotly.py ships loaded and no page margin, for a module that draws figures
    with Plotly alone (a reference this project does not control) and reads back what it drew."""
    tab = context.new_page()
    tab.set_content("<!doctype html><body style='margin:0'></body>")
    tab.add_script_tag(path=str(PLOTLY_JS))
    yield tab
    tab.close()
