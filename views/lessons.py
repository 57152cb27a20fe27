"""Lessons overview: the five lesson pages in course order, each with what it teaches and a link."""

import streamlit as st

from attnlab.lessons import COURSE
from attnlab.ui import state
from attnlab.ui.i18n import t

state.save("lessons", ())
st.title(t("lessons.title"))
st.markdown(t("lessons.intro"))
for n, lesson in enumerate(COURSE, start=1):
    with st.container(border=True):
        st.caption(t("lessons.step", n=n))
        st.markdown(f"#### {t(f'lesson_{lesson.slug}.title')}")
        st.markdown(t(f"lessons.{lesson.slug}_teaches"))
        # An st.Page (not the bare file path) so the link goes to /<url_path>, the address the router serves.
        target = st.Page(lesson.page, title=t(f"lesson_{lesson.slug}.title"), url_path=lesson.url_path)
        st.page_link(target, label=t("lessons.open"), icon=":material/arrow_forward:")
st.caption(t("lessons.share"))
