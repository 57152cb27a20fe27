"""The course's place in a session and its link: the open task, the progress, and the links that open a task.

`task` and `done` are app-wide values (`state.APP`), read from the link on a session's first run like `lang`. A
course link followed later in the same session (Next, the Course page, Back) reaches the server as a new query
under the same session, whose pages have read their links already: `follow` notices a link that names a task
and differs from the one this session last wrote, takes its task and progress, and makes the page on screen read
that link again, so the task opens where its link says. Their messages (an unknown task, unknown ids in `done`)
are shown by the task panel, which a phone shows above the page, rather than in the sidebar.
"""

from __future__ import annotations

import functools
from typing import Any

import streamlit as st

from attnlab.links.common import COURSE_NAMES
from attnlab.ui.app import registry
from attnlab.ui.app.i18n import current_lang
from attnlab.ui.app.state import APP, Problem, app_query, url_problem

LINKED = "_course.linked"  # the query this session's link held at the end of its last run
PROBLEMS = "_course.problems"  # the course's link messages, shown in the task panel
ANSWER = "course_answer"  # the answer box's key (contract 17: its container carries st-key-course_answer)
DISMISSED = "_course.offer_dismissed"  # the Playground's offer of the course, dismissed for this session


def tasks() -> list:
    """The course's tasks in this session's language."""
    from attnlab import course

    return course.tasks(current_lang())


def open_task() -> Any | None:
    """The task the session has open, or None."""
    name = APP["task"]
    return next((task for task in tasks() if task.id == name), None) if name else None


def done() -> list[str]:
    """The ids answered right so far, in course order."""
    return list(APP["done"])


def claim_problems() -> None:
    """Move the link's messages about the course from the sidebar's list to the task panel's (first run only)."""
    problems: list[Problem] = st.session_state.get("_problems.app") or []
    ours = [p for p in problems if dict(p.fmt).get("name") in COURSE_NAMES]
    if ours:
        st.session_state["_problems.app"] = [p for p in problems if p not in ours]
        st.session_state[PROBLEMS] = st.session_state.get(PROBLEMS, []) + ours


def problems() -> list[Problem]:
    """The course's link messages not yet dismissed."""
    return st.session_state.get(PROBLEMS) or []


def follow() -> None:
    """Take a course link followed within this session: its task and progress, and the page on screen reads it."""
    raw = st.query_params.to_dict()
    last = st.session_state.get(LINKED)
    if last is None or not raw.get("task") or raw == last:
        return
    before = APP["task"]
    for name in COURSE_NAMES:
        param = APP.params[name]
        value, bad = param.read(raw.get(name))
        APP[name] = value
        if bad is not None:
            st.session_state[PROBLEMS] = [*problems(), url_problem(param, raw.get(name, ""), bad)]
    if APP["task"] != before:
        st.session_state[ANSWER] = ""  # written, not dropped: the browser box empties too
    reread(registry.current() or "playground")


def reread(page: str) -> None:
    """Make a page read its link again on its next load: forget its scopes' values, as on a session's first run."""
    from attnlab.notebook import recipe_of

    try:
        scopes = recipe_of(page).scopes
    except ValueError:
        return  # a page with no link state of its own (the Course and lessons overviews)
    for scope in scopes:
        for key in [k for k in st.session_state if k.startswith(f"{scope}.")]:
            del st.session_state[key]
        st.session_state.pop(f"_loaded.{scope}", None)
        st.session_state.pop(f"_problems.{scope}", None)


def remember() -> None:
    """Note the link as this run leaves it, so that the next run can tell a course link followed from its own."""
    st.session_state[LINKED] = st.query_params.to_dict()


def mark_done(task_id: str) -> None:
    """Add a task to the progress, in the session and at once in the link (the page has written it already)."""
    from attnlab.course import IDS

    if task_id in APP["done"]:
        return
    APP["done"] = [i for i in IDS if i in {*APP["done"], task_id}]
    st.query_params["done"] = ",".join(APP["done"])


def task_query(task: Any) -> dict[str, str]:
    """The link that opens a task: its page's starting state, the task, the progress, the language and palette."""
    app = {k: v for k, v in app_query().items() if k != "task"}
    return {**task.link, **app, "task": task.id}


@functools.lru_cache(maxsize=64)  # one entry per registered page
def target(url_path: str) -> st.Page:
    """A registered page as a link's target, built once per process: a link names its own label, so the page's
    title (in a session's language) is never shown, and building a page resolves its script's path on disk."""
    spec = next(spec for spec in registry.PAGES if spec.url_path == url_path)
    return st.Page(spec.script, title=spec.url_path, url_path=spec.url_path, default=spec is registry.PAGES[0])


def task_link(task: Any, label: str, icon: str = "arrow_forward", where: Any = st) -> None:
    """A link that opens a task on its page, where its link says."""
    where.page_link(target(task.page), label=label, icon=f":material/{icon}:", query_params=task_query(task))


def page_title(url_path: str) -> str:
    """A registered page's title in this session's language."""
    return next(spec.title for spec in registry.PAGES if spec.url_path == url_path)


def first_open(ids: list[str], start_at: str = "") -> Any | None:
    """The first task not done, from `start_at` if given (wrapping round); None when every task is done."""
    order = tasks()
    start = next((i for i, task in enumerate(order) if task.id == start_at), 0)
    rest = order[start:] + order[:start]
    return next((task for task in rest if task.id not in ids), None)
