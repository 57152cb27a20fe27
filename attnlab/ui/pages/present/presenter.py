"""The presenter's screens: one stage at a time for a projector, questions before the reveal, score, pack.

The state is the Playground's (`lab.LAB`, so any Playground link opens here) plus `step` and
`quiz`. Questions come from `attnlab.classroom.build` and are graded there against the run on
screen; this module only lays them out, keeps the verdicts for the session and says them.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnlab import links
from attnlab.classroom.answers import AnswerError
from attnlab.classroom.build import questions_for_stage
from attnlab.classroom.questions import Grade, MaskQuestion, Question, ScalingQuestion
from attnlab.classroom.score import Score
from attnlab.figures import projector
from attnlab.pipeline import LabResult
from attnlab.stages import N_STEPS, Step, step
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code, md_escape
from attnlab.ui.app.widgets import chart, segmented, toggle
from attnlab.ui.parts import lab
from attnlab.ui.parts.pack import pack_downloads
from attnlab.ui.parts.stages import STAGES, Stage, StageView

PRESENT = PageState("present", links.params("present"))
VERDICTS = "present.verdicts"  # question uid -> Grade, or None when the answer was skipped
SCORE = "present.score"
PROJECTOR_CSS = """<style>
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p { font-size: 1.35rem; line-height: 1.5; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.15rem; }
[data-testid="stMain"] .katex { font-size: 1.6em; }
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }
[data-testid="stMain"] h1 { font-size: 1.75rem; padding: 0 0 0.25rem 0; }
[data-testid="stMain"] h2 { padding-top: 0.25rem; }
</style>"""  # presenter only: type read from the back of a room


def go(delta: int) -> Callable[[], None]:
    """A button callback that moves the step by `delta`, staying inside 1..11."""

    def move() -> None:
        PRESENT["step"] = min(N_STEPS, max(1, PRESENT["step"] + delta))

    return move


def navigator(where: str) -> None:
    """Previous, 'step k of 11', next: the same bar above and below the stage."""
    k = PRESENT["step"]
    back, middle, ahead = st.columns(3, vertical_alignment="center")  # thirds: "Previous" fits at 150 % zoom
    back.button(
        t("present.ui.previous"),
        key=f"present.back.{where}",
        on_click=go(-1),
        disabled=k == 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    middle.markdown(f"**{t('present.ui.step_of', k=k, n=N_STEPS)}**", text_alignment="center")
    ahead.button(
        t("present.ui.next"),
        key=f"present.ahead.{where}",
        on_click=go(1),
        disabled=k == N_STEPS,
        icon=":material/arrow_forward:",
        icon_position="right",
        width="stretch",
        type="primary",
    )


def sidebar(result: LabResult) -> None:
    """The sentence and settings, questions on or off, the session score and the pack downloads."""
    with st.sidebar.expander(t("present.ui.settings"), icon=":material/tune:"):
        lab.controls()
    toggle(PRESENT, "quiz", t("present.ui.quiz"), where=st.sidebar, help=t("present.ui.quiz_help"))
    score: Score = st.session_state.get(SCORE, Score())
    st.sidebar.metric(t("present.ui.score"), f"{score.right} / {score.answered}")
    if result.tokens:
        with st.sidebar.expander(t("present.ui.pack"), icon=":material/download:"):
            pack_downloads(lab.config(), result)


def escaped(fields: dict[str, str]) -> dict[str, str]:
    """Message fields made inert: tokens come from the user."""
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


def answer_widget(question: Question, tokens: list[str]) -> Callable[[], Grade]:
    """Draw the input the question needs; returns how to grade what is in it (may raise AnswerError)."""
    key = f"present.answer.{question.uid}"
    if isinstance(question, ScalingQuestion):
        letters = {
            c: f"{'ABC'[i]}. {t(f'present.question.scaling.choice_{c}')}" for i, c in enumerate(question.choices)
        }
        picked = st.radio(t("present.ui.your_answer"), list(letters), format_func=letters.get, key=key, index=None)
        return lambda: question.grade(picked or "")
    if isinstance(question, MaskQuestion) and question.form == "cells":
        cells = [(i, j) for i in range(question.t) for j in range(question.t)]
        names = {c: f"({c[0] + 1},{c[1] + 1}) {tokens[c[0]]} → {tokens[c[1]]}" for c in cells}
        picked = st.multiselect(
            t("present.ui.pick_cells"), cells, format_func=names.get, key=key, placeholder=t("present.ui.none_blocked")
        )
        return lambda: question.grade_cells(set(picked))
    raw = st.text_input(
        t("present.ui.your_answer"), key=key, placeholder=t(question.hint_key, **question.prompt_fields)
    )
    return lambda: question.grade(raw)


def ask(question: Question, tokens: list[str]) -> bool:
    """One question: its verdict when answered, else the prompt and a form. True once it may be revealed."""
    verdicts: dict = st.session_state.setdefault(VERDICTS, {})
    st.markdown(f"##### :material/quiz: {t(question.prompt_key, **escaped(question.prompt_fields))}")
    if question.uid in verdicts:
        say(verdicts[question.uid])
        return True
    with st.form(key=f"present.form.{question.uid}", border=True):
        grade_it = answer_widget(question, tokens)
        check, skip = st.columns(2)
        checked = check.form_submit_button(t("present.ui.check"), type="primary", width="stretch")
        skipped = skip.form_submit_button(t("present.ui.reveal"), width="stretch")
    if skipped:
        verdicts[question.uid] = None
        st.rerun()
    if checked:
        try:
            grade = grade_it()
        except AnswerError as bad:
            st.warning(t(bad.reason, **escaped({k: str(v) for k, v in bad.fields.items()})), icon=":material/edit:")
            return False
        verdicts[question.uid] = grade
        st.session_state[SCORE] = st.session_state.get(SCORE, Score()).record(question.uid, grade.correct)
        st.rerun()
    return False


def questions(current: Step, result: LabResult, view: StageView) -> bool:
    """Every question asked before this stage (when questions are on); True when the stage may be shown."""
    if not PRESENT["quiz"]:
        return True
    head = view.one if view.one is not None else view.shown[0]
    query = lab.query_row(len(result.tokens))
    asked = questions_for_stage(current.name, lab.config(), result, head=head, query=query)
    return all([ask(q, result.tokens) for q in asked])


def teacher_notes(k: int) -> None:
    """The point to make and the usual misconception, folded away from the class's eyes."""
    with st.expander(t("present.ui.notes"), icon=":material/school:"):
        st.markdown(f"**{t('present.ui.point')}** {t(f'present.step.{k}.point')}")
        st.markdown(f"**{t('present.ui.misconception')}** {t(f'present.step.{k}.misconception')}")


def on_screen(k: int) -> tuple[Step, Stage]:
    """The stage at `/present?step=k`: the core's k-th stage, and how the UI draws it, found by its name."""
    current = step(k)
    return current, STAGES[current.name]


def screen(result: LabResult, view: StageView) -> None:
    """The stage of the current step: title, formula and shape, the questions, the matrix, then its explanation.

    The matrix comes before the prose so that at 1280 x 720 a short sentence's matrix is on screen without scrolling.
    """
    current, spec = on_screen(PRESENT["step"])
    k = current.number
    st.markdown(f"## {k}. {t(f'present.step.{k}.title')}")
    st.latex(spec.formula(view))
    st.caption(spec.shape(view))
    if questions(current, result, view):
        for i, (caption, figure) in enumerate(spec.extras(view)):  # RoPE's rotation, ALiBi's bias: inside the stage
            st.caption(caption)
            chart(projector(figure, n_rows=len(result.tokens)), f"present.chart.{k}.extra{i}")
        chart(projector(spec.figure(view), n_rows=len(result.tokens)), f"present.chart.{k}")
    st.markdown(t(f"present.step.{k}.text"))
    teacher_notes(k)


def sentence(result: LabResult) -> None:
    """The tokens on screen, each as inert text, so the room knows which rows and columns are which."""
    st.markdown(" ".join(code(tok, 24) for tok in result.tokens))


def step_picker() -> None:
    """Jump to any step: 1 to 11 as buttons."""
    segmented(PRESENT, "step", t("present.ui.jump"), options=list(range(1, N_STEPS + 1)), label_visibility="collapsed")
