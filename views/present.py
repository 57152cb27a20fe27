"""Presenter: the Playground's state one stage per screen, large enough for a projector, predict before you see."""

import streamlit as st

from attnlab.ui.app.i18n import t
from attnlab.ui.pages.present import presenter as present
from attnlab.ui.parts import lab, stages


def main() -> None:
    """The same URL state as the Playground plus the step; settings and the score live in the sidebar."""
    st.markdown(present.PROJECTOR_CSS, unsafe_allow_html=True)
    lab.load()
    present.PRESENT.load()
    lab.LAB.show_problems()
    present.PRESENT.show_problems()
    result = lab.compute()
    present.sidebar(result)
    lab.save(present.PRESENT)
    st.title(t("nav.present"))
    if not lab.text_status(result):
        return
    present.sentence(result)
    present.step_picker()
    present.navigator("top")
    shown = stages.head_picker(lab.LAB, "head", result.steps.n_heads, len(result.tokens), label_visibility="collapsed")
    view = stages.StageView(
        result.tokens,
        result.x,
        result.steps,
        shown,
        lab.LAB["causal"],
        lab.query_row(len(result.tokens)),
        positions=lab.LAB["pe"],
        rule=result.rule,
    )
    present.screen(result, view)
    present.navigator("bottom")
    st.caption(t("present.ui.footer"))


main()
