"""The width probe's script in a real Chromium, called the way Streamlit 1.67 calls a component's function: again for
each new band a run was built for, the earlier calls never cleaned up. A fake main column stands in for the app's, so
each case runs in milliseconds and needs no server (`attnlab.ui.app.viewport`)."""

from __future__ import annotations

import pytest

from attnlab.figures.screen import BANDS
from attnlab.ui.app.first_screen import PENDING
from attnlab.ui.app.viewport import JS

pytestmark = pytest.mark.e2e  # the browser group: one browser for every browser test

RETRY_MS = 50  # the probe's idle tick in these tests (the app's is 2 s)
NEVER_MS = 600_000  # an idle tick no test outlasts: only the resize observer asks
LOAD = """async ([js, bands, pending, retry]) => {
  document.body.innerHTML = '<div data-test-script-state="notRunning"></div>'
    + '<div data-testid="stMainBlockContainer" style="box-sizing: border-box; padding: 0 16px; width: 390px"></div>';
  const url = URL.createObjectURL(new Blob([js], { type: 'text/javascript' }));
  const probe = (await import(url)).default;
  window.asked = [];
  window.cleanups = [];
  window.run = band => window.cleanups.push(probe({
    data: { band, bands, pending, retry_ms: retry },
    setStateValue: (name, value) => window.asked.push(value),
  }));
}"""


def load(tab, retry_ms: int):
    """A blank tab with the probe's module loaded; `run(band)` mounts it as a run built for that band would."""
    tab.set_content("<!doctype html><body></body>")
    tab.evaluate(LOAD, [JS, list(BANDS), PENDING, retry_ms])
    return tab


@pytest.fixture
def probe(page):
    """The probe as the app has it, idle ticks shortened to `RETRY_MS`."""
    return load(page, RETRY_MS)


@pytest.fixture
def patient(page):
    """The probe that never asks again on its own: what it asks is what the resize observer asked."""
    return load(page, NEVER_MS)


def width(tab, px: int) -> None:
    """Resize the fake main column (a window resized, as its resize observer sees it)."""
    tab.evaluate(f"document.querySelector('[data-testid=stMainBlockContainer]').style.width = '{px}px'")


def asked(tab) -> list[int]:
    """The bands the probe has asked the server for, in order."""
    return tab.evaluate("window.asked")


def pending(tab) -> bool:
    """Whether the page says a rerun for its width is due (what the browser tests wait on)."""
    return tab.evaluate(f"document.body.hasAttribute('{PENDING}')")


def test_a_window_flipped_across_a_band_and_back_before_any_run_leaves_nothing_pending(patient):
    patient.evaluate("window.run(800)")  # a desktop guessed; the column measures 358 px, the 340 band
    assert asked(patient) == [340] and pending(patient)
    patient.evaluate("window.run(340)")  # the run built for it calls the function again
    assert not pending(patient) and patient.evaluate("document.body.dataset.attnlabBand") == "340"
    width(patient, 1280)
    patient.wait_for_function("window.asked.length === 2", timeout=5000)
    assert pending(patient)
    width(patient, 390)  # back before the server ran: it may never run for either request
    patient.wait_for_function(f"!document.body.hasAttribute('{PENDING}')", timeout=5000)
    assert asked(patient) == [340, 800]  # one watcher asked, once each, however many calls came before


def test_a_request_that_never_comes_back_is_asked_again_while_the_app_is_idle_and_not_while_it_runs(probe):
    probe.evaluate("document.querySelector('[data-test-script-state]').dataset.testScriptState = 'running'")
    probe.evaluate("window.run(800)")
    probe.wait_for_timeout(6 * RETRY_MS)
    assert asked(probe) == [340]  # the run it asked for is under way
    probe.evaluate("document.querySelector('[data-test-script-state]').dataset.testScriptState = 'notRunning'")
    probe.wait_for_function("window.asked.length >= 2", timeout=5000)  # idle, and still no run for 340: again
    assert set(asked(probe)) == {340} and pending(probe)
    probe.evaluate("window.run(340)")
    settled = len(asked(probe))
    probe.wait_for_timeout(6 * RETRY_MS)
    assert not pending(probe) and len(asked(probe)) == settled


def test_only_the_last_calls_cleanup_stops_the_watcher(patient):
    patient.evaluate("window.run(800); window.run(340)")
    patient.evaluate("window.cleanups[0]()")  # an earlier call's cleanup: Streamlit runs it only if that call was late
    width(patient, 1280)
    patient.wait_for_function("window.asked.length === 2", timeout=5000)
    patient.evaluate("window.cleanups[1]()")  # unmounted
    width(patient, 390)
    patient.wait_for_timeout(6 * RETRY_MS)
    assert asked(patient) == [340, 800]
