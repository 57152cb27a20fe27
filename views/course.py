"""The course: every task in order, on the real pages, with the progress the link carries and a way on."""

import streamlit as st

from attnlab.ui.app import courselink, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.course.sections import lessons_link, progress, task_list


def main() -> None:
    """Progress and the next task first, then the whole list."""
    state.save()
    st.title(t("course.overview.title"))
    st.markdown(t("course.overview.intro"))
    tasks, done = courselink.tasks(), courselink.done()
    progress(tasks, done)
    st.caption(t("course.overview.share"))
    task_list(tasks, done)
    lessons_link()


main()
