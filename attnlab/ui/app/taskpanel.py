"""The task panel (contract 17): the open task on its page, graded on the numbers the page has just drawn.

The router makes the panel's place before the page runs (the sidebar on a desktop, the top of the page on a
phone: `viewport`'s band) and fills it after, once the page has written its link: the answer is graded on the
state the link holds now, so a student who changes the page is graded on the new numbers. It shows the prompt,
the answer box (`course_answer`), the verdict with why and the numbers, three hints one at a time (the third with
the answer), and Next. A right answer adds the task to `done` in the link. The page's own controls stay live.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from attnlab.figures import screen
from attnlab.ui.app import courselink, viewport
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import APP
from attnlab.ui.app.text import md_escape

SIDEBAR_FROM = screen.BANDS[-2]  # a main column this wide or wider has the sidebar open beside it: the panel goes there
HINTS = "_course.hints"  # session key: {task id: hints shown}
PANEL = "course_panel"  # the panel's container key (class st-key-course_panel)


def slot() -> Any | None:
    """Where the panel goes this run (made before the page, filled after it), or None with nothing to show."""
    if not (APP["task"] or courselink.problems()):
        return None
    band = st.session_state.get(viewport.BAND, screen.DEFAULT_PX)
    where = st.sidebar if band >= SIDEBAR_FROM else st
    return where.container(key=PANEL)


def fill(place: Any | None, page: str) -> None:
    """Draw the panel into its place for the page on screen, then note the link this run leaves."""
    if place is not None:
        with place:
            messages()
            task = courselink.open_task()
            if task is not None:
                with st.container(border=True):
                    panel(task, page or "playground")
    courselink.remember()


def messages() -> None:
    """The course's link messages (an unknown task, unknown progress), with a way to the Course page."""
    said = courselink.problems()
    if not said:
        return
    for problem in said:
        st.warning(problem.text(), icon=":material/warning:")
    left, right = st.columns(2)
    with left:
        st.page_link(course_page(), label=t("course.panel.all"), icon=":material/school:")
    right.button(t("common.dismiss"), key="_course.dismiss", on_click=forget_problems)


def forget_problems() -> None:
    """Dismiss the course's link messages."""
    st.session_state.pop(courselink.PROBLEMS, None)


def course_page() -> st.Page:
    """The Course page, as a link's target."""
    return courselink.target("course")


def panel(task: Any, page: str) -> None:
    """The task: where it is, its prompt, and (on its own page) the answer, the verdict, the hints and Next."""
    here = page == task.page
    verdict = graded(task) if here else None  # first: a right answer counts in the progress drawn above it
    order = [x.id for x in courselink.tasks()]
    n, done, total = order.index(task.id) + 1, courselink.done(), len(order)
    st.caption(
        f"{t('course.panel.title', n=n, total=total)} · {t('course.panel.progress', done=len(done), total=total)}"
    )
    st.markdown(f"**{task.prompt}**")
    if not here:
        title = courselink.page_title(task.page)
        st.info(t("course.panel.elsewhere", page=title), icon=":material/near_me:")
        courselink.task_link(task, t("course.panel.open_here", page=title))
    else:
        options(task)
        answer(task, verdict)
        hints(task)
    after(task)


def options(task: Any) -> None:
    """A choice task's options, lettered A, B, ..."""
    if task.options:
        st.markdown("\n".join(f"- **{'ABCDEFGHIJ'[i]}.** {text}" for i, text in enumerate(task.options)))


def query() -> dict[str, str]:
    """The link as the page left it this run: the state the task is graded on."""
    return st.query_params.to_dict()


def graded(task: Any) -> Any | None:
    """The verdict on what the answer box holds, on the page's numbers now (None: nothing typed); a right answer
    is added to the progress at once. A state that holds no answer gives its reason instead."""
    from attnlab.course import Unanswerable

    typed = st.session_state.get(courselink.ANSWER) or ""
    if not typed.strip():
        return None
    try:
        verdict = task.check(query(), typed)
    except Unanswerable as none:
        return none
    if verdict.correct:
        courselink.mark_done(task.id)
    return verdict


def answer(task: Any, verdict: Any | None) -> None:
    """The answer box, then the verdict (or what the page's state lacks, or a word on how it is graded)."""
    from attnlab.course import Unanswerable

    st.text_input(
        t("course.panel.answer"), key=courselink.ANSWER, placeholder=t(f"course.panel.placeholder_{task.kind}")
    )
    st.button(t("course.panel.check"), key="_course.check", icon=":material/check:")
    if verdict is None:
        st.caption(t("course.panel.note_live"))
    elif isinstance(verdict, Unanswerable):
        st.info(t(verdict.key, **escaped(verdict.fields)), icon=":material/edit:")
    else:
        say(verdict)


def escaped(fields: dict[str, str]) -> dict[str, str]:
    """Message fields made inert: tokens, texts and answers come from the student or the link."""
    return {name: md_escape(value) for name, value in fields.items()}


def say(verdict: Any) -> None:
    """The verdict and why, or the form the answer needs; how a loose answer was read, under it."""
    text = " ".join(t(key, **escaped(fields)) for key, fields in verdict.why)
    if verdict.correct:
        st.success(text, icon=":material/check_circle:")
    else:
        st.warning(text, icon=":material/edit:" if verdict.correct is None else ":material/cancel:")
    if verdict.note is not None:
        st.info(t(verdict.note.key, **escaped(verdict.note.fields)), icon=":material/info:")


def hints(task: Any) -> None:
    """The hints shown so far, a button for the next one; the third comes with the page's answer now."""
    shown: dict[str, int] = st.session_state.setdefault(HINTS, {})
    n = shown.get(task.id, 0)
    for i, hint in enumerate(task.hints[:n]):
        st.markdown(f":material/lightbulb: {t('course.panel.hint_n', n=i + 1)}: {hint}")
    if n == len(task.hints):
        from attnlab.course import Unanswerable

        try:
            st.markdown(t("course.panel.answer_now", answer=f"**{md_escape(task.expected(query()))}**"))
        except Unanswerable as none:
            st.caption(t(none.key, **escaped(none.fields)))
        return
    label = t("course.panel.hint" if n == 0 else "course.panel.more_hint")
    st.button(label, key=f"_course.hint.{task.id}", icon=":material/lightbulb:", on_click=more, args=(task.id, n + 1))


def more(task_id: str, n: int) -> None:
    """Show one hint more."""
    st.session_state.setdefault(HINTS, {})[task_id] = n


def after(task: Any) -> None:
    """Next (the next task on its page, with its link), every task, and closing the panel."""
    order = courselink.tasks()
    at = next(i for i, x in enumerate(order) if x.id == task.id)
    if at + 1 < len(order):
        upcoming = order[at + 1]
        label = t("course.panel.next", n=at + 2, page=courselink.page_title(upcoming.page))
        courselink.task_link(upcoming, label, icon="skip_next")
    else:
        st.caption(t("course.panel.last"))
    left, right = st.columns(2)
    with left:
        st.page_link(course_page(), label=t("course.panel.all"), icon=":material/school:")
    right.button(t("course.panel.close"), key="_course.close", on_click=close, icon=":material/close:")


def close() -> None:
    """Close the open task (its progress stays)."""
    APP["task"] = ""
    st.session_state[courselink.ANSWER] = ""


def offer() -> None:
    """The Playground's one line for a newcomer: the course, and a way to put it away for the session."""
    if APP["task"] or APP["done"] or st.session_state.get(courselink.DISMISSED):
        return
    tasks = courselink.tasks()
    with st.container(border=True, horizontal=True, vertical_alignment="center", key="course_offer"):
        st.markdown(f":material/school: {t('course.offer.line', total=len(tasks))}", width="content")
        courselink.task_link(tasks[0], t("course.offer.start"), icon="play_arrow")
        st.button(t("course.offer.dismiss"), key="_course.offer_dismiss", type="tertiary", on_click=dismiss)


def dismiss() -> None:
    """Put the course's offer away for this session."""
    st.session_state[courselink.DISMISSED] = True
