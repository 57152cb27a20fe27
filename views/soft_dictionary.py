"""Lesson: the soft dictionary. A hard lookup, a hand-weighted lookup (0.6·10 + 0.4·5 + 0·2 = 8), then
weights from softmax(q·k / (sqrt(d_k)·τ)) with a temperature that turns the soft lookup back into a hard one."""

import streamlit as st

from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.soft_dictionary.sections import PAGE, hard_dictionary, soft_lookup, weighted_lookup


def main() -> None:
    """The three steps from a hard dictionary to attention."""
    PAGE.load()
    st.title(t("lesson_dictionary.title"))
    st.caption(t("lesson_dictionary.intro"))
    PAGE.show_problems()
    values = hard_dictionary()
    weighted_lookup(values)
    soft_lookup(values)
    state.save(PAGE)


main()
