"""Presenter: the Playground's state one stage per screen, large enough for a projector, predict before you see.

With `class=CODE` in the link and no teacher's key in the session, the page is a student's view of that live class.
"""

import streamlit as st

from attnlab.ui.app.i18n import t
from attnlab.ui.pages.present import classroom, student, teacher
from attnlab.ui.pages.present import presenter as present
from attnlab.ui.parts import lab, stages


def main() -> None:
    """The same URL state as the Playground plus the step; settings, the score and the live class in the sidebar."""
    joined = classroom.joined()
    if joined is not None and not teacher.teaches(joined):
        student.main(joined)
        return
    st.html(present.PROJECTOR_CSS)  # styles only: Streamlit keeps it out of the page's flow
    teacher.phone_join()
    lab.load()
    present.PRESENT.load()
    lab.LAB.show_problems()
    present.PRESENT.show_problems()
    result = lab.compute()
    teacher.panel()  # first in the sidebar: the join card is for the whole room
    present.sidebar(result)
    lab.save(present.PRESENT, extra=teacher.link_extra())
    teacher.sync(present.PRESENT["step"])
    title, words = st.columns([1, 3], vertical_alignment="center")  # one row: the first screen is for the matrix
    title.title(t("nav.present"))
    if not lab.text_status(result):
        return
    present.sentence(result, words)
    present.navigator("top")
    heading, heads = st.columns([3, 2], vertical_alignment="center")  # three head buttons on one line at 1280 px
    n_heads, n_tokens = result.steps.n_heads, len(result.tokens)
    shown = stages.head_picker(lab.LAB, "head", n_heads, n_tokens, label_visibility="collapsed", where=heads)
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
    present.screen(result, view, heading, heads)
    present.navigator("bottom")
    st.caption(t("present.ui.footer"))


main()
