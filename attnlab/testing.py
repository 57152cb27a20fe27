"""Drive the real app from tests and measurement scripts: serve it with `streamlit run`, wait on its own state.

Nothing here waits a fixed time: a page has settled when Streamlit says its script is not running,
no element is a loading skeleton, every Plotly chart has drawn its SVG and nothing is still to come
(`first_screen` marks a page whose later stages wait for its first chart). Browser helpers take a
Playwright page, duck-typed, so this module imports no browser library.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
# A mid-range phone as Lighthouse's mobile profile has it, at the 390 x 844 the phone issues name: a phone's user agent
# (the app then builds a visit's first figures for a phone's width, as a real phone gets them), touch, 1.75 device
# pixels per CSS pixel; the page's CPU slowed PHONE_CPU_SLOWDOWN times (CDP `Emulation.setCPUThrottlingRate`).
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 1.75,
    "is_mobile": True,
    "has_touch": True,
    "user_agent": "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/156.0.0.0 Mobile Safari/537.36",
}
PHONE_CPU_SLOWDOWN = 4
# How long a wait on the page's state may last before it counts as hung: a cap, not a pace. A cold server's first
# page took more than 60 s on 2 cores that other work kept busy, and waiting longer costs only a failing test.
PATIENCE_MS = 180_000

SETTLED = """() => {
    const app = document.querySelector('[data-test-script-state]');
    const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
    const drawn = document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg').length;
    return app && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
        && document.querySelectorAll('[data-stale="true"]').length === 0
        && document.querySelector('[data-testid="stMain"]')?.innerText.trim().length > 0
        && drawn >= charts
        && !document.querySelector('[data-attnlab-pending]');
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
def serve_app(
    log_name: str = ".e2e-server.log", *args: str, env: dict[str, str] | None = None, root: Path = ROOT
) -> Iterator[Served]:
    """`streamlit run app.py` on a free localhost port; yields a `Served` once it is healthy, stops it after.

    `args` go to `streamlit run` (e.g. "--runner.postScriptGC=true"); `env` replaces the server's
    environment; `root` serves another checkout (to compare revisions).
    """
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    with open(ROOT / log_name, "w") as log:
        proc = subprocess.Popen([*command, *args], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            if not wait_healthy(url):
                raise RuntimeError(f"streamlit never became healthy; see {log_name}")
            yield Served(url, proc)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def redis_binary() -> str | None:
    """Debian's redis-server (the live class's shared store), if installed."""
    found = shutil.which("redis-server") or "/usr/bin/redis-server"
    return found if os.path.exists(found) else None


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A private `redis-server` on a free loopback port, nothing saved to disk: yields its URL once it answers PING,
    and stops it after. For tests and the budget scripts (`ATTNLAB_CLASS_STORE` takes the URL)."""
    binary = redis_binary()
    if binary is None:
        raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    with open(folder / "redis.log", "w") as log:
        proc = subprocess.Popen([*command, "--dir", str(folder)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not _pings(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start; see {folder / 'redis.log'}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _pings(port: int) -> bool:
    """Whether a Redis on this port answers PING (a raw RESP exchange: no client library needed)."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(b"PING\r\n")
        return s.recv(16).startswith(b"+PONG")
    return False


STATE = """() => ({
    script: document.querySelector('[data-test-script-state]')?.getAttribute('data-test-script-state'),
    skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
    stale: document.querySelectorAll('[data-stale="true"]').length,
    charts: document.querySelectorAll('[data-testid="stPlotlyChart"]').length,
    drawn: document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg').length,
    pending: [...document.querySelectorAll('[data-attnlab-pending]')].map(e => e.getAttribute('data-attnlab-pending')),
    band: document.body.dataset.attnlabBand,
})"""


def settle(tab, timeout: float = PATIENCE_MS) -> None:
    """Wait until the script has finished, nothing is stale or loading, and every chart has drawn."""
    tab.wait_for_selector('[data-test-connection-state="CONNECTED"]', timeout=timeout)
    _wait(tab, SETTLED, timeout)


def _wait(tab, condition: str, timeout: float) -> None:
    """wait_for_function, and on a timeout say what the page looked like instead."""
    try:
        tab.wait_for_function(condition, timeout=timeout)
    except Exception as exc:
        raise TimeoutError(f"the page did not settle: {tab.evaluate(STATE)}") from exc


_SOCKETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tab -> the app's websocket


def watch(tab) -> None:
    """Keep hold of the app's websocket on this tab (call before the tab loads the app), for `rerun`."""
    if tab not in _SOCKETS:
        _SOCKETS[tab] = None
        tab.on("websocket", lambda ws: _SOCKETS.__setitem__(tab, ws))


def _message_kind(payload: bytes | str) -> str | None:
    """Which ForwardMsg a websocket message is (`new_session` opens a script run, `script_finished` ends it)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    return ForwardMsg.FromString(payload).WhichOneof("type") if isinstance(payload, bytes) else None


def run_ended(payload: bytes | str) -> int | None:
    """How a script run ended (a `ForwardMsg.ScriptFinishedStatus`) if the websocket message says one did, else None."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if not isinstance(payload, bytes):
        return None
    msg = ForwardMsg.FromString(payload)
    return msg.script_finished if msg.WhichOneof("type") == "script_finished" else None


def finished(payload: bytes | str) -> bool:
    """Whether a websocket message is the server saying a script run finished: not one stopped for the rerun that
    follows it (a widget of a held rest reruns its fragment, which hands over to the page: `first_screen.rest`)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    return run_ended(payload) not in (None, ForwardMsg.FINISHED_EARLY_FOR_RERUN)


def page_finished(payload: bytes | str) -> bool:
    """Whether a websocket message is the server saying a run of the whole page finished (not a fragment's run,
    nor one cut short by a rerun)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    return run_ended(payload) == ForwardMsg.FINISHED_SUCCESSFULLY


def rerun(tab, action: Callable[[], object], timeout: float = PATIENCE_MS, whole: bool = False) -> None:
    """Do `action` (a click, a typed value) and wait for the script run it triggers to finish and draw.

    The run is recognised by the server's `script_finished` message: the page's own script-state
    attribute can miss a fast run (React may apply "running" and "not running" in one render). `whole`: wait for
    the next run of the whole page, past any fragment's runs (a polling fragment that reruns the page once a live
    run has ended, say).
    """
    with _SOCKETS[tab].expect_event("framereceived", predicate=page_finished if whole else finished, timeout=timeout):
        action()
    _drawn(tab, timeout)


def _drawn(tab, timeout: float = PATIENCE_MS) -> None:
    """After a run's `script_finished`: wait a frame (the page has handled the message), then until it settles."""
    tab.evaluate("() => new Promise(done => requestAnimationFrame(() => done()))")
    settle(tab, timeout)


CLICK_AGAIN_S = 30.0  # a click on a chart that no run has started from this long after is clicked again


def click_point(tab, point) -> None:
    """Click a chart's marker (a locator) and wait for the run it starts to finish and draw, as `rerun` does.

    Plotly picks the point it is hovering, so the mouse hovers until the point's label shows, then clicks. Plotly
    drops a click that lands while it redraws the chart: on two cores kept busy one was dropped, and its test waited
    out PATIENCE_MS. So the click is made again while the server has started no run from it (no `new_session`
    within CLICK_AGAIN_S); once a run has started, it is waited on to its `script_finished`, never clicked again
    (a second click on a chosen point would unchoose it). Each wait is on what the server says; PATIENCE_MS caps
    the whole.
    """
    seen: list[str] = []
    socket = _SOCKETS[tab]

    def note(payload: bytes | str) -> None:
        seen.append("script_finished" if finished(payload) else _message_kind(payload) or "")

    socket.on("framereceived", note)
    try:
        _click_until_a_run(tab, point, seen)
    finally:
        socket.remove_listener("framereceived", note)
    _drawn(tab)


def _click_until_a_run(tab, point, seen: list[str]) -> None:
    """`click_point`'s clicks: again while no run has started from one, then wait for that run's end."""
    give_up = time.monotonic() + PATIENCE_MS / 1000

    def wait_for(kind: str, until: float) -> bool:
        while kind not in seen and time.monotonic() < until:
            tab.wait_for_timeout(50)  # lets Playwright deliver the socket's messages
        return kind in seen

    while True:
        point.scroll_into_view_if_needed()
        box = point.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        tab.mouse.move(x, y)
        tab.wait_for_selector(".hoverlayer .hovertext", timeout=PATIENCE_MS)
        seen.clear()
        tab.mouse.click(x, y)
        if wait_for("new_session", min(give_up, time.monotonic() + CLICK_AGAIN_S)):
            break
        if time.monotonic() >= give_up:
            raise TimeoutError(f"no run came of clicking the point at ({x:.0f}, {y:.0f})")
        tab.mouse.move(0, 0)  # off the chart: the next hover label is the point's own
    if not wait_for("script_finished", give_up):
        raise TimeoutError("the run the click started did not finish")


def open_app(tab, server: str, path: str = "/") -> None:
    """Load a URL of the app and wait until it has settled."""
    watch(tab)
    tab.goto(server + path)
    settle(tab)


@functools.cache
def _components():
    """Streamlit's registry of installed v2 components, scanned once per process.

    Each new AppTest scans the metadata of every installed distribution on its first run (about 1 s here, 95 % of
    opening a page); what is installed does not change while the tests run, so every AppTest shares one scan.
    """
    from streamlit.components.v2.component_manager import BidiComponentManager

    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def app_test(timeout: float = 60, drawn: bool = True, url_path: str | None = None, script: str = "app.py"):
    """The app in AppTest; `drawn`: as a session whose browser has drawn a chart (AppTest has no browser to say so).

    `script` is the entry point, relative to the repository (`cloud/streamlit_app.py` is Community Cloud's).

    Every AppTest shares one scan of the installed components (`_components`). `url_path` opens that page on the
    first run, as a visitor of `/<url_path>` would get it: AppTest's own `switch_page` names a page by its file
    before the first run, which misses a page whose URL path is not its file name (`real-model`), so the request
    carries the hash `st.Page` gives its URL path (Streamlit 1.67).
    """
    from streamlit.testing.v1 import AppTest
    from streamlit.util import calc_hash

    from attnlab.ui.app.first_screen import DRAWN

    at = AppTest.from_file(str(ROOT / script), default_timeout=timeout)
    at._bidi_component_manager = _components()
    if drawn:
        at.session_state[DRAWN] = True
    if url_path is not None:
        at._page_hash = calc_hash(url_path)
    return at


def page_on_screen(at) -> str:
    """The script hash of the page an AppTest's last run drew (to check it is the page that was asked for)."""
    return at._finished_page_script_hash


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far, every thread counted (utime + stime from /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident memory of a process now."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))
