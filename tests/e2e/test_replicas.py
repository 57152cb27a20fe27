"""Contract 7: `bash deploy/replicas.sh N PORT` serves a shared link identically from every replica, stops cleanly;
with ATTNLAB_REPLICAS_REDIS=1 its replicas share one redis-server, and a live class is followed from each."""

from __future__ import annotations

import base64
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from urllib.parse import urlsplit

import pytest

from attnlab.testing import ROOT, free_port, redis_binary
from tests.e2e.conftest import chart_text, no_exception, open_app, rerun

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
LINK = "/?text=the+class+sees+one+matrix&seed=11&causal=true&heads=2&lang=en"


@pytest.fixture
def front():
    """Two replicas behind nginx on a free port; yields (url, the script's process, the pids it announced, replica 0's
    address as nginx names it)."""
    if NGINX is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is missing: .ci/run installs Debian's nginx")
        pytest.skip("no nginx (apt-get install nginx) to put in front of the replicas")
    if redis_binary() is None and os.environ.get("CI"):
        pytest.fail("redis-server is missing: .ci/run installs Debian's redis-server")
    shared = {"ATTNLAB_REPLICAS_REDIS": "1"} if redis_binary() else {}  # the replicas share one Redis
    port = free_port()
    proc = subprocess.Popen(
        ["bash", "deploy/replicas.sh", "2", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "ATTNLAB_FRONT_ADDRESS": "127.0.0.1", **shared},
        start_new_session=True,
    )
    lines, deadline = [], time.monotonic() + 240
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.startswith("attnlab: http") or (not line and proc.poll() is not None):
            break
    assert lines[-1].startswith("attnlab: http"), "".join(lines)
    pids = [int(p) for p in re.findall(r"pid (\d+)", "".join(lines))]
    first = re.search(r"replica 0: port (\d+)", "".join(lines)).group(1)
    store = re.search(r"^redis: pid \d+, (redis://\S+)", "".join(lines), flags=re.MULTILINE)
    yield f"http://127.0.0.1:{port}", proc, pids, f"127.0.0.1:{first}", store.group(1) if store else None
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def replica_of(url: str, key: str) -> str:
    """Which replica nginx sends a browser holding the affinity cookie `key` to (one plain request, no browser)."""
    request = urllib.request.Request(url + LINK, headers={"Cookie": f"attnlab_replica={key}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers["X-Attnlab-Replica"]


def keys_for_each_replica(url: str, replicas: int) -> dict[str, str]:
    """An affinity key that lands on each replica, found with plain requests (each key hashes to one replica)."""
    found: dict[str, str] = {}
    for i in range(200):
        found.setdefault(replica_of(url, f"probe-{i}"), f"probe-{i}")
        if len(found) == replicas:
            break
    return found


def upgrade(url: str, key: str) -> tuple[str, str]:
    """A websocket handshake for the app's stream through nginx, holding the affinity cookie `key` (no browser):
    (the status line, the replicas nginx tried, in order)."""
    front = urlsplit(url)
    nonce = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {front.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {nonce}\r\nSec-WebSocket-Version: 13\r\nCookie: attnlab_replica={key}\r\n\r\n"
    )
    with socket.create_connection((front.hostname, front.port), timeout=30) as sock:
        sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, head
            head += chunk
    status, *lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return status, headers.get("X-Attnlab-Replica", "")


def visit(context, url: str, key: str, link: str = LINK):
    """A browser holding only the affinity cookie `key` opens a link; returns (tab, the replica serving it).

    The visits share one profile, as one computer's browser does: its cookie decides the replica, and the
    frontend's scripts come from its cache.
    """
    context.clear_cookies()
    context.add_cookies([{"name": "attnlab_replica", "value": key, "url": url}])
    tab = context.new_page()
    replica: list[str] = []
    tab.on("response", lambda r: replica.append(r.headers.get("x-attnlab-replica")) if r.url.endswith(link) else None)
    open_app(tab, url, link)
    return tab, replica[0]


def class_followed_on_every_replica(context, url: str, keys: dict[str, str], store_url: str) -> None:
    """A class kept in the replicas' one Redis: a student on each replica sees its step, and the teacher's move
    (the store's advance, as the teacher's page makes it) reaches both."""
    from attnlab.classroom.live import open_store

    store = open_store(store_url)
    code, key = store.create("text=one+class+two+replicas&causal=true&step=4&quiz=false")
    tabs = []
    for replica, cookie in keys.items():
        tab, served_by = visit(context, url, cookie, f"/present?class={code}&lang=en")
        assert served_by == replica and tab.locator("h4").filter(has_text="4. ").count() == 1
        tabs.append(tab)
    store.advance(code, key, 5)
    for tab in tabs:
        tab.locator("h4").filter(has_text="5. ").wait_for(timeout=60_000)  # found by each replica's poll
        assert no_exception(tab)
        tab.close()


def test_every_replica_serves_the_link_alike_and_a_dead_one_is_routed_around(context, front):
    """Each replica, reached by its affinity cookie, serves the link's page and its websocket and draws the same
    matrices; a change goes through nginx's websocket; once a replica dies, its visitors' page requests and
    websockets go to the live one (which drew those matrices above), and the live one's visitors stay put."""
    url, proc, pids, first, store_url = front
    assert len(pids) == (4 if store_url else 3)  # two replicas, nginx and (where installed) their redis-server
    keys = keys_for_each_replica(url, 2)
    assert len(keys) == 2, keys  # a class's random keys spread over both replicas
    switching = "HTTP/1.1 101 Switching Protocols"
    seen: dict[str, str] = {}
    for replica, key in keys.items():  # one browser on each replica, by its affinity cookie
        tab, served_by = visit(context, url, key)
        assert served_by == replica  # the page and its scripts come from the key's replica
        assert upgrade(url, key) == (switching, replica)  # and so does its websocket
        seen[replica] = chart_text(tab, 7)
        if len(seen) < 2:
            tab.close()
    assert len(set(seen.values())) == 1  # the softmax weights are the same on both replicas
    before = chart_text(tab, 7)
    rerun(tab, lambda: tab.get_by_text("Causal mask", exact=True).click())  # the websocket works through nginx
    assert "causal=false" in tab.url and chart_text(tab, 7) != before and no_exception(tab)
    tab.close()
    if store_url:
        class_followed_on_every_replica(context, url, keys, store_url)
    os.kill(pids[0], signal.SIGKILL)  # replica 0 dies
    live = next(replica for replica in keys if replica != first)
    assert replica_of(url, keys[live]) == live  # the live replica's browsers stay where they are
    status, tried = upgrade(url, keys[first])  # the dead replica's browser: its websocket goes to the live one
    assert status == switching and tried.split(", ")[-1] == live
    assert replica_of(url, keys[first]).split(", ")[-1] == live  # and so does its page
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) is not None
    time.sleep(1)
    assert not [pid for pid in pids if alive(pid)]
