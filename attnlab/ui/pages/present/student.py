"""A student's screen in a live class (`/present?class=CODE`): the teacher's step, its question, then the reveal.

The page follows the class by a poll (`follow`, a fragment run every `classroom.POLL_S`): it asks the store for the
step, the link and the reveal, draws nothing, and reruns the whole page only when one of them changed, so a poll
costs the server a read, not a page. Everything drawn comes from the class link through `attnlab.classroom.classlink`
(the same run, heads and question as the projector). A student may look back at an earlier step (never ahead of the
teacher) and return to following; answers go to the current step until the reveal, and are shown as text only.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attnlab.classroom import classlink
from attnlab.classroom.answers import AnswerError
from attnlab.classroom.live import normalize_code
from attnlab.classroom.questions import Question
from attnlab.classroom.score import Score
from attnlab.figures import palette, screen
from attnlab.stages import N_STEPS
from attnlab.ui.app import latex, state
from attnlab.ui.app.i18n import current_lang, t
from attnlab.ui.app.text import code as inert
from attnlab.ui.app.widgets import chart
from attnlab.ui.pages.present import classroom, teacher
from attnlab.ui.pages.present.answering import answer_input, escaped, prompt, say, unreadable
from attnlab.ui.pages.present.presenter import SCORE, on_screen, sentence
from attnlab.ui.parts.stages import Stage, StageView

FIGURES_KEPT = 64  # steps x languages x palettes x widths of the classes a server follows at once
LOOK = "live.look"  # the step a student looks back at (absent: following the teacher)
MINE = "live.mine"  # (code, link, step) -> the answer this session sent


def main(raw: str) -> None:
    """The class `raw` names, or why it cannot be shown and a box to type another code."""
    state.save(extra={classroom.CLASS: raw})
    teacher.panel_for_student()
    code, now, error = normalize_code(raw), None, None
    try:
        now = classroom.store().state(code) if code else None
    except classroom.REFUSALS as failed:
        error = failed
    if code:  # first in the page, so it keeps one place (its id) whatever the step draws: the browser keeps one timer
        follow(code, None if now is None else (now["step"], now["link"], now["revealed"]))
    if error is not None:
        st.error(t("live.student.unreachable", detail=classroom.refusal(error)), icon=":material/wifi_off:")
        st.button(t("live.student.retry"), icon=":material/refresh:")
    elif now is None:
        st.markdown(f"### {t('live.student.title', code=inert(raw, 24))}")
        st.warning(t("live.student.unknown", code=inert(raw, 24)), icon=":material/search_off:")
        st.markdown(f"**{t('live.student.another')}**")
        classroom.join_box("unknown")
    else:
        draw(code, now)


@st.fragment(run_every=classroom.POLL_S)
def follow(code: str, seen: tuple | None) -> None:
    """Ask the store where the class is; rerun the page only when its step, link or reveal changed (or it ended).

    Drawn within a whole-page run, the page has just read the class: only the poll's own runs read it again.
    """
    if not polling():
        return
    try:
        now = classroom.store().state(code) if code else None
    except classroom.REFUSALS:
        return  # keep what is on screen; the next poll tries again
    found = None if now is None else (now["step"], now["link"], now["revealed"])
    if found != seen:
        st.rerun()


def polling() -> bool:
    """Whether this run is a poll (the fragment's own run), not the whole page's."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def draw(code: str, now: dict) -> None:
    """The step the student is on: heading, where the teacher is, the sentence, the question or the matrix."""
    link, teacher_step = now["link"], now["step"]
    look = st.session_state.get(LOOK)
    if look is not None and not 1 <= look < teacher_step:
        st.session_state.pop(LOOK)
        look = None
    k = teacher_step if look is None else look
    st.markdown(f"**:material/groups: {t('live.student.title', code=code)}**")
    navigator(k, teacher_step)
    read, result = classlink.read_link(link), classlink.class_run(link)
    if not result.tokens:
        st.info(t("live.student.empty"), icon=":material/edit_off:")
        return
    spec = on_screen(k)[1]
    st.markdown(f"#### {k}. {t(f'present.step.{k}.title')}")
    sentence(result)
    config = read.config
    view = StageView(
        result.tokens, result.x, result.steps, read.shown, config.causal, positions=config.positions, rule=result.rule
    )
    st.caption(spec.shape(view))
    latex.show(spec.formula(view))
    question = classlink.class_question(link, k)
    if question is not None and k == teacher_step and not now["revealed"]:
        answer(code, link, k, question, result.tokens)
    else:
        if question is not None:
            verdict(code, link, k, question, revealed_now=k == teacher_step)
        charts(spec, view, link, k)
    st.markdown(t(f"present.step.{k}.text"))
    score: Score = st.session_state.get(SCORE, Score())
    st.caption(f"{t('live.student.score')}: {score.right} / {score.answered} · {t('live.student.anonymous')}")


def navigator(k: int, teacher_step: int) -> None:
    """Where the teacher is, then the buttons that make sense here, in one row even on a phone: back to an earlier step
    (never ahead of the teacher), and while looking back, a later step and following again."""
    if k == teacher_step:
        st.caption(t("live.student.following", k=k, n=N_STEPS))
    else:
        st.info(t("live.student.looking", k=k, teacher=teacher_step), icon=":material/history:")
    row = st.container(horizontal=True, vertical_alignment="center")
    if k > 1:
        row.button(
            t("live.student.back"), on_click=look_at, args=(k - 1,), key="live.back", icon=":material/arrow_back:"
        )
    if k < teacher_step:
        later = k + 1 if k + 1 < teacher_step else None  # the teacher's own step is following again
        row.button(
            t("live.student.forward"),
            on_click=look_at,
            args=(later,),
            key="live.ahead",
            icon=":material/arrow_forward:",
            icon_position="right",
        )
        row.button(
            t("live.student.follow"),
            on_click=look_at,
            args=(None,),
            key="live.follow",
            type="primary",
            icon=":material/groups:",
        )


def look_at(k: int | None) -> None:
    """Button callback: look at step k (None: follow the teacher again)."""
    if k is None:
        st.session_state.pop(LOOK, None)
    else:
        st.session_state[LOOK] = k


def answer(code: str, link: str, k: int, question: Question, tokens: list[str]) -> None:
    """The open question: the prompt, what this student sent, and a form to send or change it."""
    prompt(question)
    mine: dict = st.session_state.setdefault(MINE, {})
    with st.form(key=f"live.form.{question.uid}"):
        read = answer_input(question, tokens, key=f"live.answer.{question.uid}")
        sending = st.form_submit_button(t("live.student.send"), type="primary", icon=":material/send:")
    if sending:
        raw = read()
        try:
            classroom.store().answer(code, classroom.student_id(), k, raw)
        except classroom.REFUSALS as error:
            st.warning(classroom.refusal(error), icon=":material/block:")
        else:
            mine[(code, link, k)] = raw
    sent = mine.get((code, link, k))
    if sent is not None:
        said = classroom.answer_text(question, sent)
        st.info(t("live.student.sent", answer=inert(said, 200)), icon=":material/outgoing_mail:")
        bad = classroom.unread(question, sent)
        if bad is not None:
            st.warning(t("live.student.sent_unread", why=unreadable(bad)), icon=":material/edit:")
    st.caption(t("live.student.wait"))


def verdict(code: str, link: str, k: int, question: Question, *, revealed_now: bool) -> None:
    """After the reveal (or on a step the class has left): this student's verdict with its why, counted once in the
    score; the right answer explained, in a neutral box, for a student whose answer was none or unreadable (a wrong
    answer's verdict already names the right one); the class's tally on the revealed step."""
    sent = st.session_state.get(MINE, {}).get((code, link, k))
    explained = False
    if sent is None:
        st.info(t("live.student.not_answered"), icon=":material/visibility:")
    else:
        try:
            grade = question.grade(sent)
        except AnswerError as bad:
            st.warning(f"{inert(sent, 200)} · {unreadable(bad)}", icon=":material/edit:")
        else:
            say(grade)
            explained = True  # right or wrong, the verdict's why names the right answer
            st.session_state[SCORE] = st.session_state.get(SCORE, Score()).record(question.uid, grade.correct)
    if not explained:
        st.markdown(f"**{t('live.student.right_answer')}**")
        answer = question.grade(classlink.right_answer(question))
        st.info(t(answer.why, **escaped(answer.fields)), icon=":material/lightbulb:")
    if revealed_now:
        try:
            classroom.tally(question, classroom.store().tally(code, k))
        except classroom.REFUSALS as error:
            st.warning(classroom.refusal(error), icon=":material/wifi_off:")


def charts(spec, view: StageView, link: str, k: int) -> None:
    """The stage's charts at the phone's width (the projector's large type is for the back of a room)."""
    built = figures(link, k, current_lang(), palette.current().name, screen.width(), spec, view)
    for i, (caption, figure) in enumerate(built[:-1]):
        chart(figure, f"live.chart.{k}.extra{i}")
        st.caption(caption)
    chart(built[-1][1], f"live.chart.{k}")


@st.cache_resource(show_spinner=False, max_entries=FIGURES_KEPT)
def figures(link: str, k: int, lang: str, palette_name: str, width: int, _spec: Stage, _view: StageView) -> list:
    """A step's figures for one class link, language, palette and width, built once for the whole class.

    Sixty phones rerun on each Next; the first builds the step's figures, the rest take them (DESIGN: a figure may be
    cached where the key holds everything that shapes it: the link fixes the numbers and heads, the rest the text and
    look; `_spec` and `_view` follow from the link and k, so they are not hashed). Shared read-only: `chart` sends a
    copy and changes nothing.
    """
    return [*_spec.extras(_view), ("", _spec.figure(_view))]
