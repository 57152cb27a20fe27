"""Lesson: why divide by sqrt(d_k). Var(q.k) measured over d_k = 1..512, softmax saturation with and without
the scaling, and one concrete query at the user's d_k."""

import streamlit as st

from attnlab.lessons import scaling as lesson
from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.scaling.sections import PAGE, controls, one_query_section, saturation_section, variance_section


def main() -> None:
    """Variance, saturation, then one query, all for the user's d_k and seed."""
    PAGE.load()
    st.title(t("lesson_scaling.title"))
    st.caption(t("lesson_scaling.intro"))
    PAGE.show_problems()
    controls()
    state.save(PAGE)
    dk, n_keys, seed, scaled = PAGE["dk"], PAGE["keys"], PAGE["seed"], PAGE["scaled"]
    grid = tuple(lesson.dk_grid(dk))
    variance_section(grid, dk, seed)
    first_screen.rest(lambda: later(grid, dk, n_keys, scaled, seed))  # a new visitor's browser draws the variance first


def later(grid: tuple, dk: int, n_keys: int, scaled: bool, seed: int) -> None:
    """Saturation with and without the scaling, then one query."""
    saturation_section(grid, dk, n_keys, seed)
    one_query_section(dk, n_keys, scaled, seed)


main()
