"""What answering a presenter question looks like, alone or in a live class: the input it needs and the verdict.

Shared by the presenter's own questions, the teacher's reveal and each student's screen, so a question is asked and
explained the same way everywhere. Every field that holds outside text (tokens, answers) is made inert first.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnlab.classroom.answers import AnswerError
from attnlab.classroom.classlink import NO_CELLS
from attnlab.classroom.questions import Grade, MaskQuestion, Question, ScalingQuestion
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import md_escape


def escaped(fields: dict[str, object]) -> dict[str, str]:
    """Message fields made inert: tokens and answers come from users."""
    return {name: md_escape(value) for name, value in fields.items()}


def say(grade: Grade | None) -> None:
    """The verdict and why (or that the question was skipped)."""
    if grade is None:
        st.info(t("present.ui.skipped"), icon=":material/visibility:")
        return
    text = t(grade.why, **escaped(grade.fields))
    if grade.correct:
        st.success(text, icon=":material/check_circle:")
    else:
        st.error(text, icon=":material/cancel:")


def unreadable(bad: AnswerError) -> str:
    """Why an answer could not be read, naming the form the question expects, in this session's language."""
    return t(bad.reason, **escaped(bad.fields))


def prompt(question: Question) -> None:
    """The question itself, as a heading."""
    st.markdown(f"##### :material/quiz: {t(question.prompt_key, **escaped(question.prompt_fields))}")


def choice_label(question: ScalingQuestion, choice: str) -> str:
    """`A. more peaked: ...`: a choice by its letter and words."""
    return f"{'ABC'[question.choices.index(choice)]}. {t(f'present.question.scaling.choice_{choice}')}"


def answer_input(question: Question, tokens: list[str], key: str) -> Callable[[], str]:
    """Draw the input the question needs; returns how to read what is in it as the text its grade parses.

    A choice gives its id (`peaked`); ticked cells their pairs counted from 1 (`(1,2) (1,3)`, or `none`).
    """
    if isinstance(question, ScalingQuestion):
        labels = {c: choice_label(question, c) for c in question.choices}
        picked = st.radio(t("present.ui.your_answer"), list(labels), format_func=labels.get, key=key, index=None)
        return lambda: picked or ""
    if isinstance(question, MaskQuestion) and question.form == "cells":
        cells = [(i, j) for i in range(question.t) for j in range(question.t)]
        names = {c: f"({c[0] + 1},{c[1] + 1}) {tokens[c[0]]} → {tokens[c[1]]}" for c in cells}
        picked = st.multiselect(
            t("present.ui.pick_cells"), cells, format_func=names.get, key=key, placeholder=t("present.ui.none_blocked")
        )
        return lambda: " ".join(f"({i + 1},{j + 1})" for i, j in sorted(picked)) or NO_CELLS
    raw = st.text_input(
        t("present.ui.your_answer"), key=key, placeholder=t(question.hint_key, **question.prompt_fields)
    )
    return lambda: raw
