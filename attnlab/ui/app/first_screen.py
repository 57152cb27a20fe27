"""The first screen first: until a session's browser has drawn a chart, a long page sends only what is in view.

Eleven stage charts (twenty-two in a comparison) arriving together cost the browser one long task before any of
them showed, on top of loading Plotly itself. So a session's runs draw only the first `FIRST_SCREEN` stages
until a small script in the page sees the first chart drawn and asks for a rerun, which sends everything.
Later runs of the session draw everything at once: the browser has Plotly loaded by then. A desktop's first run
splits too: sent whole, Cross-attention at its largest drew its last chart no sooner (0.98-0.99x in 12 paired
visits, `python -m scripts.phone --desktop --root <split> --root <whole>`) and its first 1.12-1.15x later. A request
that never reaches a run (it went astray among the page's other reruns, once in a browser test's many) would leave
the page on its first screen for good, so while the script stays mounted, the page idle, it asks again every
`RETRY_MS` * 2.

A page that holds its rest with `rest()` holds it in a fragment, so the request reruns only the rest: the browser is
sent the rest's elements alone, not the whole page again, and renders only those (Multi-head at its largest
settings on a desktop: 67 messages instead of 109; in two runs of `python -m scripts.phone --desktop` its last chart
came 0.01-0.21x of the one-chart page sooner). A reader's change to a widget of that rest then reruns the whole
page, as any other change does, so the link, the share button and the task panel always follow. The fragment itself
is called with no page data: Streamlit keeps a fragment's call, arguments and all, for as long as the session lives,
and an idle session of Cross-attention at 64 x 64 tokens held 24-26 MB of its result that way, over DESIGN's 20 MB
(Multi-head at its largest, 6-8 MB). The rest's `draw` waits in the session instead (`HELD`) and the fragment's run
takes it out, after which such a session holds next to nothing (`python -m scripts.phone --desktop --idle 10`: -7 to
7 MB in three runs, within what the server's own garbage moves between readings).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnlab.figures import palette, screen
from attnlab.ui.app.i18n import t

FIRST_SCREEN = 2  # stages sent before the browser has drawn a chart: a 1000-px-tall window shows less than two
DRAWN = "app.chart_drawn"  # session flag: this session's browser has drawn a chart
SENT = "app.charts_sent"  # how many charts this run has sent so far (`new_run`, `sent`)
DUE = "app.rest_due"  # the browser has just asked for the rest: the fragment's rerun is to draw it (`rest`)
HELD = "app.held_rest"  # the held rest's `draw` until the fragment's run draws it (one held rest a page)
# Ask for the rest anyway when no chart is drawn FALLBACK_MS after one began drawing (a chart that failed, say), or
# LATEST_MS after the script mounted: a phone 4x slower than a laptop spends seconds loading the chart library before
# any chart begins, and a rest asked for while its first chart draws arrives in the same task (issue 61).
FALLBACK_MS = 6000
LATEST_MS = 30000
RETRY_MS = 2000  # asked, and the app idle for two of these since, yet the rest has not come: ask again
PENDING = "data-attnlab-pending"  # on an element in the page while the rest is still to come (tests wait on it)
SIGNAL = "app.first_chart_signal"  # the key of the script that asks for the rest

JS = """
export default function ({ data, setTriggerValue }) {
  const selector = '[data-testid="stPlotlyChart"] .main-svg';
  let live = true;
  let asked = false;
  let frame = 0;
  let idleTicks = 0;
  const send = () => { if (live) setTriggerValue("drawn", true); };  // never from an unmounted instance
  const ask = () => {
    if (!asked) {
      asked = true;
      observer.disconnect();
      send();
    }
  };
  const mounted = performance.now();
  let begun = null;  // when a chart began drawing (Plotly's own element is in the page)
  // ask once a frame with the chart in it has been painted, so the rest cannot join the task that draws it
  const afterPaint = () => { frame = requestAnimationFrame(() => { frame = requestAnimationFrame(ask); }); };
  const seen = () => {
    if (document.querySelector(selector)) {
      observer.disconnect();
      afterPaint();
    }
  };
  // Still mounted after asking, with the app idle for two ticks in a row: the request went astray among the
  // page's other reruns (the width probe's, say), and the rest would never come; ask again.
  const watchdog = setInterval(() => {
    const now = performance.now();
    if (begun === null && document.querySelector('.js-plotly-plot')) begun = now;
    if (!asked && ((begun !== null && now - begun > data.fallback_ms) || now - mounted > data.latest_ms)) ask();
    const state = document.querySelector('[data-test-script-state]')?.getAttribute('data-test-script-state');
    idleTicks = state === 'notRunning' ? idleTicks + 1 : 0;
    if (asked && idleTicks >= 2) {
      idleTicks = 0;
      send();
    }
  }, data.retry_ms);
  const observer = new MutationObserver(seen);
  observer.observe(document.body, { childList: true, subtree: true });
  seen();
  return () => {
    live = false;
    observer.disconnect();
    clearInterval(watchdog);
    cancelAnimationFrame(frame);
  };
}
"""


def upto() -> int | None:
    """How many stages this run draws: `FIRST_SCREEN` until the browser has drawn a chart, then all (None)."""
    return None if st.session_state.get(DRAWN) else FIRST_SCREEN


def _mark_drawn() -> None:
    st.session_state[DRAWN] = True
    st.session_state[DUE] = True


def new_run() -> None:
    """A run of the whole page begins: no chart sent yet, and it draws any rest itself (the router calls this first)."""
    st.session_state[SENT] = 0
    st.session_state.pop(DUE, None)
    st.session_state.pop(HELD, None)


def sent() -> None:
    """A chart was sent (`widgets.chart` calls this)."""
    st.session_state[SENT] = st.session_state.get(SENT, 0) + 1


def rest(draw: Callable[[], object], say: str | None = None) -> None:
    """The rest of the page, below what it drew above this call: drawn now once the browser has drawn a chart (or when
    this run has sent none: there would be none to wait for), else held in a fragment that says the rest is coming
    (`say`, else `common.more_coming`) and mounts the script that asks for it. Sent together, a page's charts and
    tables were drawn in one long task on a phone, its first chart no sooner than its last (issue 61)."""
    if st.session_state.get(DRAWN) or not st.session_state.get(SENT):
        draw()
    else:
        st.session_state[HELD] = draw
        _held(say, screen.band_in_use(), palette.current().name)


def in_two(draw: Callable[[slice], object], total: int) -> None:
    """A page of `total` stages, `draw` drawing those of a slice: the first `FIRST_SCREEN` now and the others as `rest`
    holds them, or all at once in a run whose browser has drawn a chart."""
    if st.session_state.get(DRAWN) or total <= FIRST_SCREEN:
        draw(slice(None))
        return
    draw(slice(None, FIRST_SCREEN))
    rest(lambda: draw(slice(FIRST_SCREEN, None)), say=t("stages.more_coming", first=FIRST_SCREEN + 1, last=total))


@st.fragment
def _held(say: str | None, band: int, colours: str) -> None:
    """The held rest. In the page's run: the promise and the script. In the rerun the script asks for: the rest, and
    nothing above it, its figures built for the page run's width band and palette (a fragment's run starts without
    the router's settings), its `draw` taken out of the session so that nothing keeps the page's data once drawn. In
    a rerun a widget of that rest asks for (or one with nothing held): the whole page, which then draws the rest
    itself (a fragment's rerun would leave the link and the sidebar as they were)."""
    if not st.session_state.get(DRAWN):
        ask_for_the_rest(0, 1, say=say or t("common.more_coming"))
        return
    draw = st.session_state.pop(HELD, None) if st.session_state.pop(DUE, False) else None
    if draw is None:
        st.rerun()
    screen.use(band)
    palette.use(colours)
    draw()


def ask_for_the_rest(shown: int | None, total: int, say: str | None = None) -> None:
    """When only the first stages (or sections: `say` then says what follows) were drawn: say the rest is coming,
    and mount the script that asks for it."""
    if shown is None or shown >= total:
        return
    st.caption(say or t("stages.more_coming", first=shown + 1, last=total))
    signal = st.components.v2.component(
        "attnlab.first_chart_drawn", html=f'<span {PENDING}="stages"></span>', js=JS, isolate_styles=False
    )
    signal(
        key=SIGNAL,
        data={"fallback_ms": FALLBACK_MS, "latest_ms": LATEST_MS, "retry_ms": RETRY_MS},
        on_drawn_change=_mark_drawn,
    )
