"""Lesson: RoPE. One pair of q turning with the position, every pair's speed base**(-2i/d), a shift of every position
that leaves the scores unchanged (and the two pairings that disagree), and the decay of the scores with distance."""

import streamlit as st

from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.rope.sections import (
    PAGE,
    controls,
    decay_section,
    frequency_section,
    load,
    pair_section,
    shift_section,
)


def main() -> None:
    """The settings, then the four sections, all computed live from them."""
    load()
    st.title(t("lesson_rope.title"))
    st.caption(t("lesson_rope.intro"))
    settings = controls()
    state.save(PAGE)
    pair_section(settings)
    first_screen.rest(lambda: later(settings))  # a new visitor's browser draws the pair's plane first


def later(settings) -> None:
    """Every pair's speed, the shift that changes no score, the decay with distance."""
    frequency_section(settings)
    shift_section(settings)
    decay_section(settings)


main()
