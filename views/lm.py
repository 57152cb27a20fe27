"""Language model: type a sentence, watch a real model read it and predict the next character, head by head."""

import streamlit as st

from attnlab.ui.app import first_screen, fold, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.lm import branches, controls, heads, inside, lens, predict, sinks, training
from attnlab.ui.pages.lm.model import LM, fit, fit_query, loaded, read_or_say, settle


def main() -> None:
    """The model and text, then prediction, branches and the lens (when open), every head, one head's stages, the
    sink, training."""
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
    first_only = first_screen.upto() is not None  # the browser has drawn no chart yet: the painted text first
    if got is not None:
        predict.section(lm, step, got, rest=not first_only)
    if first_only:  # the rest follows once the first chart is drawn
        first_screen.ask_for_the_rest(1, 6, say=t("lm.more_coming"))
        return
    if got is not None:
        branches.section(lm, step, got)
        lens.section(lm, step, got)
        heads.section(lm, step, got)
        inside.section(lm, step, got)
    with fold.section(LM, "sinks", t("lm.sinks_title"), icon=":material/anchor:") as drawn:
        if drawn:  # below the fold, drawn once opened (issue 61)
            sinks.section(lm, step)
    with fold.section(LM, "training", t("lm.training_title"), icon=":material/trending_down:") as drawn:
        if drawn:
            training.section(lm, step)


main()
