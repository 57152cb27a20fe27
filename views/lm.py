"""Language model: type a sentence, watch a real model read it and predict the next character, head by head."""

import streamlit as st

from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.lm import controls, heads, inside, predict, sinks, training
from attnlab.ui.pages.lm.model import LM, fit, fit_query, loaded, read_or_say, settle


def main() -> None:
    """The model and text, then prediction, every head, one head's stages, the sink, training."""
    st.title(t("lm.title"))
    st.caption(t("lm.intro"))
    first = LM.load()
    settle(first)
    controls.model_picker()
    lm = loaded()
    if lm is None:
        LM.show_problems()
        state.save(LM)
        return
    step = fit(first, lm)
    fit_query(first, step)
    LM.show_problems()
    controls.text_box(lm)
    got = read_or_say(step)
    state.save(LM)
    if got is not None:
        predict.section(lm, step, got)
        heads.section(lm, step, got)
        inside.section(lm, step, got)
    sinks.section(lm, step)
    training.section(lm, step)


main()
