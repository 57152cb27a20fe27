"""Lesson: masking. The causal triangle on `<BOS> I like you <EOS>`, one parallel pass against T separate ones,
then -inf / -1e9 / finfo.min in float32, float16 and bfloat16, with a fully blocked row (NaN vs SDPA's 0)."""

import streamlit as st

from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.masking.sections import PAGE, causal_rows, fills, sequence


def main() -> None:
    """The causal rows, then the fill values."""
    PAGE.load()
    st.title(t("lesson_masking.title"))
    st.caption(t("lesson_masking.intro"))
    PAGE.show_problems()
    tokens = sequence()
    causal_rows(tokens)
    first_screen.rest(lambda: fills(tokens))  # a new visitor's browser draws the causal rows first
    state.save(PAGE)


main()
