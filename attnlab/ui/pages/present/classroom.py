"""What a live class's two screens share: the store, the class named in the link, join boxes, refusals in words.

The store is opened once per server process and URL (a connection pool and a file path, shared by every session,
never changed by one) from `ATTNLAB_CLASS_STORE`. Every refusal the store raises carries a reason,
which is said here as one line in this session's language; a store that cannot be opened or reached is a refusal too,
so the presenter goes on without its class.
"""

from __future__ import annotations

import os
import secrets
import threading

import streamlit as st

from attnlab.classroom.answers import AnswerError
from attnlab.classroom.classlink import NO_CELLS, fold, right
from attnlab.classroom.live import STORE_ENV, ClassStore, StoreUnavailable, normalize_code, open_store
from attnlab.classroom.questions import MaskQuestion, Question, ScalingQuestion
from attnlab.figures.tally import tally_figure
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code as inert
from attnlab.ui.app.widgets import chart
from attnlab.ui.pages.present.answering import choice_label, escaped

CLASS = "class"  # the link's parameter: the code of the class a student follows
STUDENT = "live.student"  # this browser session's opaque student id
POLL_S = 1.75  # s between two polls of a student's page: 60 students at 3-4 ms a poll stay within 15 % of a core, and
# a step reaches the last of 60 within a poll and their reruns (3 s)


_OPENED: dict[str, ClassStore] = {}  # one store per URL for the whole process, as st.cache_resource would keep it
_OPENING = threading.Lock()


def store() -> ClassStore:
    """The class store this server uses (StoreUnavailable when it cannot be opened).

    A dict under a lock rather than `st.cache_resource`: a student's poll asks for it every time, and the cache's
    own bookkeeping cost a third of what the store's read did.
    """
    url = os.environ.get(STORE_ENV, "")
    found = _OPENED.get(url)
    if found is not None:
        return found
    with _OPENING:
        if url not in _OPENED:
            try:
                _OPENED[url] = open_store(url)
            except ValueError as bad:  # a store URL this server cannot use: the operator's setting, said as an outage
                raise StoreUnavailable(str(bad)) from None
        return _OPENED[url]


def refusal(error: Exception) -> str:
    """A store's refusal (or outage) as one line in this session's language; outside text in it made inert."""
    reason = getattr(error, "reason", "unreachable")
    fields = getattr(error, "fields", {"detail": str(error)})
    return t(f"live.refused.{reason}", **escaped(fields))


REFUSALS = (ValueError, KeyError, PermissionError, StoreUnavailable)  # what a store call may raise at a user


def joined() -> str | None:
    """The class code in the link, as it was written (the student's page checks it)."""
    return st.query_params.get(CLASS)


def student_id() -> str:
    """This browser session's id in every class it joins: random, opaque, and never a name."""
    return st.session_state.setdefault(STUDENT, secrets.token_urlsafe(12))


def join_box(key: str) -> None:
    """A code box and Join: a good code opens the class (the link gets `class=CODE`); a bad one is said and kept."""
    label, hint = t("live.ui.code_label"), t("live.ui.code_placeholder")
    st.text_input(label, key=f"live.join_code.{key}", max_chars=24, placeholder=hint)
    st.button(t("live.ui.join"), key=f"live.join.{key}", on_click=join, args=(key,), icon=":material/login:")
    bad = st.session_state.pop(f"live.join_bad.{key}", None)
    if bad is not None:
        st.warning(t("live.ui.bad_code", code=inert(bad, 30)), icon=":material/pin:")


def join(key: str) -> None:
    """Button callback: open the class typed in the box `key`, or keep the text and say why it is not a code."""
    typed = st.session_state.get(f"live.join_code.{key}") or ""
    found = normalize_code(typed)
    if found is None:
        st.session_state[f"live.join_bad.{key}"] = typed
        return
    st.session_state.pop("live.look", None)
    st.query_params[CLASS] = found


def tally(question: Question, counts: dict[str, int]) -> None:
    """The class's answers as bars, the right ones marked, and how many were right."""
    n = sum(counts.values())
    if not n:
        st.info(t("live.ui.no_answers"), icon=":material/hourglass_empty:")
        return
    rows = [(answer_text(question, key), count, right(question, key)) for key, count in counts.items()]
    title, x_title = t("live.ui.tally_title", n=n), t("live.ui.tally_x")
    chart(tally_figure(rows, title, t("live.ui.other"), x_title), "live.tally")
    st.caption(t("live.ui.right_share", right=sum(c for _, c, ok in rows if ok), n=n))


def answer_text(question: Question, key: str) -> str:
    """A folded answer as the class reads it: a choice by its letter and words, no masked cell in the class's
    language, anything else as it was folded."""
    if isinstance(question, ScalingQuestion) and key in question.choices:
        return choice_label(question, key)
    if isinstance(question, MaskQuestion) and question.form == "cells" and key == NO_CELLS:
        return t("present.ui.none_blocked")
    return key


def unread(question: Question | None, raw: str) -> AnswerError | None:
    """Why the question cannot read this answer (None when it can, or when there is no question)."""
    return fold(question, raw)[1]
