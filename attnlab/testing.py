"""Drive the real app from tests and measurement scripts: serve it with `streamlit run`, wait on its own state.

Nothing here waits a fixed time: a page has settled when Streamlit says its script is not running,
no element is a loading skeleton and every Plotly chart has drawn its SVG. Browser helpers take a
Playwright page, duck-typed, so this module imports no browser library.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]

SETTLED = """() => {
    const app = document.querySelector('[data-test-script-state]');
    const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
    const drawn = document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg').length;
    return app && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
        && document.querySelectorAll('[data-stale="true"]').length === 0
        && document.querySelector('[data-testid="stMain"]')?.innerText.trim().length > 0
        && drawn >= charts;
}"""
WATCH_RUNS = """() => {
    const app = document.querySelector('[data-test-script-state]');
    window.__attnlabRuns = 0;
    new MutationObserver(() => {
        if (app.getAttribute('data-test-script-state') === 'running') window.__attnlabRuns += 1;
    }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Served:
    """A running `streamlit run app.py`: where to reach it and its process."""

    url: str
    proc: subprocess.Popen


def wait_healthy(url: str, timeout_s: float = 120.0) -> bool:
    """Poll Streamlit's health endpoint until it answers ok (False when it never does)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return True
        time.sleep(0.25)
    return False


@contextlib.contextmanager
def serve_app(log_name: str = ".e2e-server.log", *args: str) -> Iterator[Served]:
    """`streamlit run app.py` on a free localhost port; yields a `Served` once it is healthy, stops it after."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    with open(ROOT / log_name, "w") as log:
        proc = subprocess.Popen([*command, *args], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            if not wait_healthy(url):
                raise RuntimeError(f"streamlit never became healthy; see {log_name}")
            yield Served(url, proc)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def settle(tab, timeout: float = 60_000) -> None:
    """Wait until the script has finished, nothing is stale or loading, and every chart has drawn."""
    tab.wait_for_selector('[data-test-connection-state="CONNECTED"]', timeout=timeout)
    tab.wait_for_function(SETTLED, timeout=timeout)


def rerun(tab, action: Callable[[], object], timeout: float = 60_000) -> None:
    """Do `action` (a click, a typed value) and wait for the script run it triggers to finish and draw."""
    tab.evaluate(WATCH_RUNS)
    action()
    tab.wait_for_function("() => window.__attnlabRuns > 0", timeout=timeout)
    settle(tab, timeout)


def open_app(tab, server: str, path: str = "/") -> None:
    """Load a URL of the app and wait until it has settled."""
    tab.goto(server + path)
    settle(tab)
