"""The presenter's screens: one stage at a time for a projector, questions before the reveal, score, pack.

The state is the Playground's (`lab.LAB`, so any Playground link opens here) plus `step` and
`quiz`. Questions come from `attnlab.classroom.build` and are graded there against the run on
screen; this module only lays them out, keeps the verdicts for the session and says them. While the session teaches
a live class (`teacher`), a step asks the class's one question instead, and the class's tally takes the verdict's place.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnlab import links
from attnlab.classroom.answers import AnswerError
from attnlab.classroom.build import questions_for_stage
from attnlab.classroom.questions import Question
from attnlab.classroom.score import Score
from attnlab.figures import projector
from attnlab.figures.screen import band_in_use
from attnlab.figures.screen import share as screen_share
from attnlab.pipeline import LabResult
from attnlab.stages import N_STEPS, Step, step
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, segmented, toggle
from attnlab.ui.pages.present import teacher
from attnlab.ui.pages.present.answering import answer_input, prompt, say, unreadable
from attnlab.ui.parts import lab
from attnlab.ui.parts.pack import pack_box
from attnlab.ui.parts.stages import STAGES, Stage, StageView

PRESENT = PageState("present", links.params("present"))
VERDICTS = "present.verdicts"  # question uid -> Grade, or None when the answer was skipped
SCORE = "present.score"
SETTINGS_OPEN, PACK_OPEN = "present.settings_open", "present.pack_open"  # the sidebar's two folded boxes
QUESTION_SHARE = 0.6  # of the page, the chart's column beside a step's questions
PROJECTOR_CSS = """<style>
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p { font-size: 1.35rem; line-height: 1.5; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.15rem; }
[data-testid="stMain"] .katex { font-size: 1.6em; }
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }
[data-testid="stMain"] h1 { font-size: 1.75rem; padding: 0 0 0.25rem 0; }
[data-testid="stMain"] h2 { padding-top: 0.25rem; font-size: 1.9rem; }
[data-testid="stMain"] [data-testid="stButtonGroup"] p { font-size: 1.1rem; }
</style>"""  # presenter only: type read from the back of a room


def go(delta: int) -> Callable[[], None]:
    """A button callback that moves the step by `delta`, staying inside 1..11."""

    def move() -> None:
        PRESENT["step"] = min(N_STEPS, max(1, PRESENT["step"] + delta))

    return move


def navigator(where: str) -> None:
    """Previous, then 'step k of 11' (at the bottom) or every step as a button (at the top), then next.

    Under an 800-px column (a 1024-px projector's, with the sidebar open) the steps take two lines whatever their
    share, so the buttons beside them get room for their whole label ("Previous" was cut to "Pre...")."""
    k = PRESENT["step"]
    side = 1.2 if band_in_use() >= 800 else 2.2
    back, middle, ahead = st.columns([side, 4, side] if where == "top" else 3, vertical_alignment="center")
    back.button(
        t("present.ui.previous"),
        key=f"present.back.{where}",
        on_click=go(-1),
        disabled=k == 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    if where == "top":  # one row where a step picker, a counter and the buttons took three
        step_picker(middle)
    else:
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
    """The sentence and settings, questions on or off, the session score and the pack downloads. The settings and the
    pack are built only once opened: folded, their fifteen widgets still cost a phone's first chart (issue 61)."""
    with fold.folded(st.sidebar, t("present.ui.settings"), SETTINGS_OPEN, icon=":material/tune:") as opened:
        if opened:
            lab.controls(narrow=True)
    toggle(PRESENT, "quiz", t("present.ui.quiz"), where=st.sidebar, help=t("present.ui.quiz_help"))
    score: Score = st.session_state.get(SCORE, Score())
    st.sidebar.metric(t("present.ui.score"), f"{score.right} / {score.answered}")
    if result.tokens:
        pack_box(st.sidebar, PACK_OPEN, lab.config(), result)


def ask(question: Question, tokens: list[str]) -> bool:
    """One question: its verdict when answered, else the prompt and a form. True once it may be revealed."""
    verdicts: dict = st.session_state.setdefault(VERDICTS, {})
    prompt(question)
    if question.uid in verdicts:
        say(verdicts[question.uid])
        return True
    with st.form(key=f"present.form.{question.uid}", border=True):
        read = answer_input(question, tokens, key=f"present.answer.{question.uid}")
        check, skip = st.columns(2)
        checked = check.form_submit_button(t("present.ui.check"), type="primary", width="stretch")
        skipped = skip.form_submit_button(t("present.ui.reveal"), width="stretch")
    if skipped:
        verdicts[question.uid] = None
        st.rerun()
    if checked:
        try:
            grade = question.grade(read())
        except AnswerError as bad:
            st.warning(unreadable(bad), icon=":material/edit:")
            return False
        verdicts[question.uid] = grade
        st.session_state[SCORE] = st.session_state.get(SCORE, Score()).record(question.uid, grade.correct)
        st.rerun()
    return False


def answered(question: Question) -> bool:
    """Whether this session has answered (or skipped) a question."""
    return question.uid in st.session_state.get(VERDICTS, {})


def asked(current: Step, result: LabResult, view: StageView) -> tuple[Question, ...]:
    """The questions asked before this stage (none when questions are off); a live class's one question."""
    if teacher.teaching():
        return teacher.question(current.number)
    if not PRESENT["quiz"]:
        return ()
    head = view.one if view.one is not None else view.shown[0]
    query = lab.query_row(len(result.tokens))
    return questions_for_stage(current.name, lab.config(), result, head=head, query=query)


def teacher_notes(k: int) -> None:
    """The point to make and the usual misconception, folded away from the class's eyes."""
    with st.expander(t("present.ui.notes"), icon=":material/school:"):
        st.markdown(f"**{t('present.ui.point')}** {t(f'present.step.{k}.point')}")
        st.markdown(f"**{t('present.ui.misconception')}** {t(f'present.step.{k}.misconception')}")


def on_screen(k: int) -> tuple[Step, Stage]:
    """The stage at `/present?step=k`: the core's k-th stage, and how the UI draws it, found by its name."""
    current = step(k)
    return current, STAGES[current.name]


def screen(result: LabResult, view: StageView, heading, aside) -> None:
    """The stage of the current step: title (in `heading`) and shape (in `aside`, under the head picker), formula, the
    questions, the matrix and its explanation.

    At 1280 x 720 with the sidebar open the matrix starts within the first screen (issue 54): the title shares a row
    with the head picker, the captions of modern attention's charts come under them, and a step's questions sit
    beside its chart, so the verdict stays in view with the matrix it reveals.
    """
    current, spec = on_screen(PRESENT["step"])
    k = current.number
    heading.markdown(f"## {k}. {t(f'present.step.{k}.title')}")
    aside.caption(spec.shape(view))
    latex.show(spec.formula(view))
    questions = asked(current, result, view)
    asker, done = (teacher.ask, teacher.revealed) if teacher.teaching() else (ask, answered)
    if questions and all(done(q) for q in questions):  # revealed: each verdict (a class's tally) beside the chart
        where, beside = st.columns([3, 2])
        with beside:
            for question in questions:
                asker(question, result.tokens)
        with where, screen_share(QUESTION_SHARE):
            charts(spec, view, len(result.tokens), k)
    elif all([asker(q, result.tokens) for q in questions]):  # no questions, or none left to answer
        charts(spec, view, len(result.tokens), k)
    st.markdown(t(f"present.step.{k}.text"))
    teacher_notes(k)


def charts(spec: Stage, view: StageView, n_rows: int, k: int) -> None:
    """The stage's extra charts (RoPE's rotation, ALiBi's bias), each with its caption under it, then its matrix."""
    for i, (caption, figure) in enumerate(spec.extras(view)):
        chart(projector(figure, n_rows=n_rows), f"present.chart.{k}.extra{i}")
        st.caption(caption)
    chart(projector(spec.figure(view), n_rows=n_rows), f"present.chart.{k}")


def sentence(result: LabResult, where=st) -> None:
    """The tokens on screen, each as inert text, so the room knows which rows and columns are which."""
    where.markdown(" ".join(code(tok, 24) for tok in result.tokens))


def step_picker(where) -> None:
    """Jump to any step: 1 to 11 as buttons."""
    segmented(
        PRESENT,
        "step",
        t("present.ui.jump"),
        where=where,
        options=list(range(1, N_STEPS + 1)),
        label_visibility="collapsed",
        width="stretch",
    )
