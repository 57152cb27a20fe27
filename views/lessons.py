"""Lessons overview: the lesson pages in course order, each with what it teaches and a link."""

import streamlit as st

from attnlab.ui.app import registry as pages
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t


def lesson_card(n: int, spec: pages.PageSpec) -> None:
    """One lesson: its step number, title, what it teaches, and the way in."""
    with st.container(border=True):
        st.caption(t("lessons.step", n=n))
        st.markdown(f"#### {spec.title}")
        st.markdown(t(f"lessons.{spec.lesson}_teaches"))
        pages.link(spec.file, t("lessons.open"))


def main() -> None:
    """The course in order."""
    state.save()
    st.title(t("lessons.title"))
    st.markdown(t("lessons.intro"))
    pages.link("course", t("course.offer.course"), icon="school")  # the one course list: tasks on these pages
    for n, spec in enumerate(pages.COURSE, start=1):
        lesson_card(n, spec)
    st.caption(t("lessons.share"))


main()
