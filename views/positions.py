"""Lesson: positions. Self-attention alone is permutation-equivariant (max diff ~1e-16 after un-shuffling);
sinusoidal positional encodings break that. Plus the PE heatmap and its exact values."""

import streamlit as st

from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.positions.sections import PAGE, shuffle_section, sinusoid_section


def main() -> None:
    """The shuffle experiment, then the sinusoids."""
    PAGE.load()
    st.title(t("lesson_positions.title"))
    st.caption(t("lesson_positions.intro"))
    PAGE.show_problems()
    shuffle_section()
    first_screen.rest(sinusoid_section)  # a new visitor's browser draws the shuffle's four charts first
    state.save(PAGE)


main()
