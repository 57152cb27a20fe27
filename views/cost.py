"""Lesson: cost. The explicit path timed live against T (log-log slope ~2), recorded GPU results when data/gpu/
has any (never invented), and an RNN against attention: T sequential steps and T - 1 hops against 1 and 1."""

import streamlit as st

from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.cost.sections import PAGE, live_section, recorded_section, rnn_section


def main() -> None:
    """Measured live, recorded on GPUs, then counted against an RNN."""
    PAGE.load()
    st.title(t("lesson_cost.title"))
    st.caption(t("lesson_cost.intro"))
    PAGE.show_problems()
    live_section()
    first_screen.rest(later)  # a new visitor's browser draws the live run's charts first
    state.save(PAGE)


def later() -> None:
    """The recorded GPU runs, then the RNN."""
    recorded_section()
    rnn_section()


main()
