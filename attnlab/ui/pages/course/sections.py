"""The Course page's parts: the progress and the way on, then every task in order, grouped by the page it is on.

The list is `attnlab.course.tasks` in the session's language; the progress is the link's `done`. Each task opens
on its page with its link (`courselink.task_link`), so the page starts where the task does.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

import streamlit as st

from attnlab.ui.app import courselink
from attnlab.ui.app import registry as pages
from attnlab.ui.app.i18n import t


def progress(tasks: list[Any], done: list[str]) -> None:
    """How many tasks are done, and the link to the first one that is not (from the open one on, if any)."""
    st.progress(len(done) / len(tasks), text=t("course.overview.progress", done=len(done), total=len(tasks)))
    now = courselink.open_task()
    upcoming = courselink.first_open(done, start_at=now.id if now is not None else "")
    if upcoming is None:
        courselink.task_link(tasks[0], t("course.overview.again"), icon="replay")
        return
    n = [task.id for task in tasks].index(upcoming.id) + 1
    key = "course.overview.start" if not done and n == 1 else "course.overview.continue"
    label = t(key, n=n, title=courselink.page_title(upcoming.page))
    with st.container(key="course_continue"):
        courselink.task_link(upcoming, label, icon="play_arrow")


def task_list(tasks: list[Any], done: list[str]) -> None:
    """Every task in order, under the page it is on: its number, whether it is done, its prompt, a link to it."""
    numbered = list(enumerate(tasks, start=1))
    for page, group in groupby(numbered, key=lambda item: item[1].page):
        st.subheader(courselink.page_title(page))
        for n, task in group:
            with st.container(border=True, key=f"course_task_{task.id}"):
                mark = f" · :green[:material/check_circle: {t('course.overview.done')}]" if task.id in done else ""
                st.caption(f"{t('course.overview.step', n=n)}{mark}")
                st.markdown(task.prompt)
                courselink.task_link(task, t("course.overview.open", n=n))


def lessons_link() -> None:
    """The lessons, which explain at length what the tasks have the student use."""
    st.caption(t("course.overview.lessons"))
    pages.link("lessons", t("course.overview.lessons_link"), icon="auto_stories")
