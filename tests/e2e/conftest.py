"""A real `streamlit run` on a free localhost port, driven by Playwright in Debian's headless Chromium."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
HAVE_CHROMIUM = Path(CHROMIUM).exists()

pytestmark = pytest.mark.e2e


def _no_browser() -> None:
    """Skip with the reason; in CI (CI=true) a missing browser is a failure, not a skip."""
    message = f"no Chromium at {CHROMIUM}; install Debian's chromium to run the browser tests"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Served:
    """A running `streamlit run app.py`: where to reach it and its process."""

    url: str
    proc: subprocess.Popen


@contextlib.contextmanager
def serve_app(log_name: str = ".e2e-server.log"):
    """`streamlit run app.py` on a free localhost port; yields a `Served` once it is healthy."""
    port = _free_port()
    with open(ROOT / log_name, "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(480):
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.25)
            else:
                pytest.fail(f"streamlit never became healthy; see {log_name}")
            yield Served(url, proc)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


@pytest.fixture(scope="session")
def server() -> str:
    """Base URL of the app served by `streamlit run app.py` for the whole test session."""
    if not HAVE_CHROMIUM:
        _no_browser()
    with serve_app() as served:
        yield served.url


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session."""
    if not HAVE_CHROMIUM:
        _no_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh tab (its own Streamlit session) per test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    yield tab
    context.close()


def settle(tab, timeout: float = 60_000) -> None:
    """Wait until the script has finished, no skeleton is left and Plotly has drawn."""
    tab.wait_for_timeout(250)  # let a rerun that was just triggered reach the browser first
    tab.wait_for_selector('[data-test-connection-state="CONNECTED"]', timeout=timeout)
    tab.wait_for_function(
        """() => {
            const app = document.querySelector('[data-test-script-state]');
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
                && document.querySelector('[data-testid="stMain"]')?.innerText.trim().length > 0;
        }""",
        timeout=timeout,
    )
    tab.wait_for_timeout(600)


def open_app(tab, server: str, path: str = "/") -> None:
    """Load a URL of the app and wait until it has settled."""
    tab.goto(server + path)
    settle(tab)


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
