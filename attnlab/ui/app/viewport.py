"""The browser's chart width, for figures built on the server: a probe in the page reports the main column's band.

Streamlit tells a script nothing of the viewport (`st.context` has the locale, not the width), and a Plotly figure's
panels and wrapped titles are laid out before it reaches the browser. So a small script in every page measures the
main column and, when its band (`figures.screen.BANDS`) differs from the one this session's figures were built for,
stores it and reruns the page. Until it has, a browser that calls itself a phone gets a phone's band and any other a
desktop's, so most visits never rerun for their width; a window narrowed or widened past a band's edge (a phone
turned) reruns once. The page's body carries the band measured (`data-attnlab-band`) and, while a rerun it asked for
is due, `first_screen.PENDING`: the browser tests wait on both.

One watcher per page does the measuring. Streamlit 1.67 calls a component's function again whenever its data
changes (a run built for a new band) and calls only the last call's cleanup, on unmount; watchers made per call
piled up, each with its own idea of the band last asked for. A window flipped across a band and back before the
server ran (two requests, one run, the band unchanged) then left the page pending for good: no new data, so no call
to clear it. Now each call hands the one watcher the band its run was built for; the watcher clears the mark when
the measured band is that band, asks when it is not, and asks again when the app has stayed idle since asking.
"""

from __future__ import annotations

import functools

import streamlit as st

from attnlab.figures import screen
from attnlab.ui.app.first_screen import PENDING, RETRY_MS

KEY = "app.width_probe"  # the probe's element; its state holds the band the browser reported
BAND = "app.chart_band"  # session key: the band this session's figures are built for (guessed, then reported)
PHONE_PX = 340  # the band of a 390-px phone's charts (358 px wide), guessed for a phone's first run
JS = """
export default function ({ data, setStateValue }) {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main) return;
  let probe = window.attnlabWidthProbe;
  if (!probe || probe.stopped || probe.main !== main) {
    probe?.stop();
    probe = window.attnlabWidthProbe = watch(main, data);
  }
  const token = ++probe.token;
  probe.built = data.band;
  probe.setStateValue = setStateValue;
  probe.check();
  return () => { if (probe.token === token) probe.stop(); };
}

function watch(main, data) {
  const probe = { main, token: 0, built: null, setStateValue: null, asked: null, idle: 0, stopped: false };
  const band = () => {
    const style = getComputedStyle(main);
    const px = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return data.bands.filter(b => b <= px).pop() ?? data.bands[0];
  };
  probe.check = () => {
    const now = band();
    document.body.dataset.attnlabBand = now;  // what the page measured (the browser tests wait for it)
    if (now === probe.built) {
      probe.asked = null;
      document.body.removeAttribute(data.pending);
    } else {
      document.body.setAttribute(data.pending, 'width');
      if (now !== probe.asked) {
        probe.asked = now;
        probe.setStateValue('band', now);
      }
    }
  };
  const watcher = new ResizeObserver(probe.check);
  watcher.observe(main);
  const watchdog = setInterval(() => {
    const state = document.querySelector('[data-test-script-state]')?.getAttribute('data-test-script-state');
    probe.idle = state === 'notRunning' && probe.asked !== null ? probe.idle + 1 : 0;
    if (probe.idle >= 2) {
      probe.idle = 0;
      probe.asked = null;
      probe.check();
    }
  }, data.retry_ms);
  probe.stop = () => {
    probe.stopped = true;
    watcher.disconnect();
    clearInterval(watchdog);
  };
  return probe;
}
"""


@functools.cache
def _component():
    """The probe's component, registered once per process (registering it again on every run cost a millisecond)."""
    return st.components.v2.component("attnlab.chart_width", html="<span></span>", js=JS, isolate_styles=False)


def _reported() -> None:
    st.session_state[BAND] = st.session_state[KEY]["band"]


def guess() -> int:
    """Before the browser has reported: a phone's band where its browser says it is a phone ("Mobi" in the user agent,
    as MDN advises), a desktop's otherwise, so that most visits are never rerun for their width."""
    agent = st.context.headers.get("User-Agent", "") if st.context.headers else ""
    return PHONE_PX if "Mobi" in agent else screen.DEFAULT_PX


def probe() -> None:
    """Build this run's figures for the band the browser reported, and mount the probe that reports a new one.

    Called after `st.navigation` has named the page: a report is a rerun, and the frontend sends a rerun for the page
    it last heard of. Until the run's navigation message arrives that is the entry script, which Streamlit serves as
    the default page, so a probe that reported sooner (a new visitor whose width is not the guessed one, on a server
    slow to reach `st.navigation`) took a course link to /soft-dictionary onto the Playground."""
    if BAND not in st.session_state:
        st.session_state[BAND] = guess()
    band = st.session_state[BAND]
    screen.use(band)
    mount = _component()
    # basic types only (a list there imports pandas); asked, and the app idle for two of the first screen's retry
    # ticks since, yet no run built for the band: the probe asks again
    data = dict(band=band, bands=screen.BANDS, pending=PENDING, retry_ms=RETRY_MS)
    with st.sidebar:
        mount(key=KEY, data=data, on_band_change=_reported)
