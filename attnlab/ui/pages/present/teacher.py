"""The teacher's side of a live class: start or resume it, the join card the room sees, each step sent, the reveal.

The key lives in this session only (`TEACH`); the projected page and its link carry only the code. Who loses the
session takes the class back with the teacher's key, shown folded away in the sidebar, never in a link: a link's
query lands in proxy logs and browser history. Every run of the presenter sends the step and the link the class
follows when either changed (`sync`), so Next, a new sentence or a setting reach the students at their next poll.
"""

from __future__ import annotations

import io
import urllib.parse

import segno
import streamlit as st

from attnlab.classroom import classlink
from attnlab.classroom.live import normalize_code
from attnlab.classroom.questions import Question
from attnlab.figures import screen
from attnlab.limits import MAX_CLASS_LINK_CHARS
from attnlab.ui.app import fold, state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code as inert
from attnlab.ui.pages.present import classroom
from attnlab.ui.pages.present.answering import prompt, say

TEACH = "live.teach"  # {"code", "key"} of the class this session teaches
SYNCED = "live.synced"  # (step, link) the store last got from this session
NOW = "live.now"  # the class's state as this run read it
NOTICE = "live.notice"  # a message for the next run: (kind, text)
QR_SCALE = 6  # px per module of the join QR code (a version-3 code of a short address: about 200 px)
KEY_SEPARATOR = ":"  # between the code and the key in the teacher's key (neither contains it)


def teaching() -> dict | None:
    """The class this session teaches, if any."""
    return st.session_state.get(TEACH)


def teaches(code: str | None) -> bool:
    """Whether this session holds the key of the class `code`."""
    held = teaching()
    return held is not None and normalize_code(code) == held["code"]


def link_extra() -> dict[str, str]:
    """What the presenter's link carries of the class: its code, never the key."""
    held = teaching()
    return {classroom.CLASS: held["code"]} if held else {}


def class_link() -> str:
    """The presenter's state as the class link: the address bar's query without the app's own settings."""
    return classlink.link_of(st.query_params.to_dict())


def start() -> None:
    """Button callback: a new class on what is on screen now."""
    link = class_link()
    try:
        found = classroom.store().create(link)
    except classroom.REFUSALS as error:
        st.session_state[NOTICE] = ("error", classroom.refusal(error))
        return
    st.session_state[TEACH] = {"code": found[0], "key": found[1]}
    st.session_state[SYNCED] = (classlink.read_link(link).step, link)


def stop() -> None:
    """Button callback: this tab lets go of the class (the students keep its last step until it expires)."""
    st.session_state.pop(TEACH, None)
    st.session_state.pop(SYNCED, None)
    st.query_params.pop(classroom.CLASS, None)


def sync(step: int) -> None:
    """Send the step and link when they changed, then read the class's state for this run (the count, the reveal)."""
    held = teaching()
    if held is None:
        return
    link, store = class_link(), None
    try:
        store = classroom.store()
        if st.session_state.get(SYNCED) != (step, link):
            fits = len(link) <= MAX_CLASS_LINK_CHARS  # too many edited cells: the class keeps its last state, said
            store.advance(held["code"], held["key"], step, link if fits else None)
            st.session_state[SYNCED] = (step, link)
        if len(link) > MAX_CLASS_LINK_CHARS:
            st.warning(t("live.refused.bad_link", cap=MAX_CLASS_LINK_CHARS), icon=":material/link_off:")
        st.session_state[NOW] = store.state(held["code"])
    except KeyError:  # expired: the class is gone
        st.session_state[NOW] = None
    except classroom.REFUSALS as error:
        st.session_state[NOW] = {}
        st.warning(t("live.ui.sync_failed", why=classroom.refusal(error)), icon=":material/wifi_off:")
    if st.session_state[NOW] is None:
        stop()
        st.warning(t("live.ui.ended", code=held["code"]), icon=":material/timer_off:")


def now() -> dict:
    """The class's state as this run read it ({} when it could not be read)."""
    return st.session_state.get(NOW) or {}


def revealed(_question: Question) -> bool:
    """Whether the class's current step has been revealed (the presenter asks per question; a class has one)."""
    return bool(now().get("revealed"))


def question(k: int) -> tuple[Question, ...]:
    """The one question step k asks the class (none when the step has none or questions are off)."""
    found = classlink.class_question(class_link(), k)
    return (found,) if found is not None else ()


def ask(q: Question, tokens: list[str]) -> bool:
    """The class's question on the projector: the prompt, the live count and Reveal; after it, the tally. True once
    revealed (the presenter then draws the matrix beside)."""
    prompt(q)
    held = teaching()
    if not revealed(q):
        st.caption(t("live.ui.waiting"))
        count, button = st.columns([1, 2], vertical_alignment="center")
        with count:
            answered(held["code"])
        button.button(t("live.ui.reveal"), on_click=reveal, type="primary", icon=":material/visibility:")
        return False
    try:
        counts = classroom.store().tally(held["code"], int(now().get("step", 1)))
    except classroom.REFUSALS as error:
        st.warning(classroom.refusal(error), icon=":material/wifi_off:")
        return True
    classroom.tally(q, counts)
    say(q.grade(classlink.right_answer(q)))
    return True


@st.fragment(run_every=classroom.POLL_S)
def answered(code: str) -> None:
    """How many have answered the current step, read again at every poll (never what they answered)."""
    try:
        found = classroom.store().state(code) or {}
    except classroom.REFUSALS:
        found = now()
    st.metric(t("live.ui.answered"), found.get("answers", 0))


def reveal() -> None:
    """Button callback: reveal the current step to the class."""
    held = teaching()
    try:
        classroom.store().reveal(held["code"], held["key"])
    except classroom.REFUSALS as error:
        st.session_state[NOTICE] = ("warning", classroom.refusal(error))


def panel() -> None:
    """The sidebar's live class: the join card and the private key while teaching; else start, join and resume."""
    notice = st.session_state.pop(NOTICE, None)
    box = st.sidebar.container(border=True)
    if notice:
        getattr(box, notice[0])(notice[1])
    held = teaching()
    if held is None:
        box.markdown(f"**:material/groups: {t('live.ui.panel')}**")
        box.button(
            t("live.ui.start"), on_click=start, help=t("live.ui.start_help"), icon=":material/cast_for_education:"
        )
        join_expander(box, "sidebar")
        resume_box(box)
        return
    join_card(box, held["code"])
    with box.expander(t("live.ui.private"), icon=":material/key:"):
        st.caption(t("live.ui.private_help"))
        st.code(f"{held['code']}{KEY_SEPARATOR}{held['key']}", language=None, wrap_lines=True)
    box.button(t("live.ui.end"), on_click=stop, help=t("live.ui.end_help"), icon=":material/logout:")


def panel_for_student() -> None:
    """The sidebar beside a student's screen: another code to join, and the teacher's way back into this class."""
    box = st.sidebar.container(border=True)
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        getattr(box, notice[0])(notice[1])
    box.markdown(f"**:material/groups: {t('live.ui.panel')}**")
    join_expander(box, "student")
    resume_box(box, t("live.student.teacher"))


def phone_join() -> None:
    """On a phone, where the sidebar is folded away, the join box opens the page (a projector's first screen is the
    matrix's, so a desktop keeps it in the sidebar)."""
    if teaching() is None and screen.phone():
        join_expander(st, "phone")


def join_url(code: str) -> str:
    """The address a student opens: this page with the class's code and nothing else."""
    base = (st.context.url or "").split("?")[0].split("#")[0]
    return f"{base}?{urllib.parse.urlencode({classroom.CLASS: code})}"


def join_card(where, code: str) -> None:
    """What the room sees, first in the sidebar: the code in large type, the QR code of the address (segno), the
    address itself."""
    url = join_url(code)
    where.markdown(f"**:material/groups: {t('live.ui.panel')}**")
    where.markdown(f"# {code}")  # from the class alphabet: letters and digits only
    png = io.BytesIO()
    segno.make(url, error="m").save(png, kind="png", scale=QR_SCALE, border=2)
    where.image(png.getvalue(), width="stretch")
    where.markdown(f"{t('live.ui.join_at')} {inert(url.split('://', 1)[-1], 120)}")
    where.caption(t("live.ui.scan"))


def resume_box(where, title: str | None = None) -> None:
    """Take a class back with the teacher's key (`CODE:KEY`), typed or pasted; a wrong one changes nothing."""
    with fold.folded(where, title or t("live.ui.resume"), "live.resume_open", icon=":material/key:") as opened:
        if opened:  # drawn only when opened: a student's page reruns on every Next, and widgets cost server time
            st.text_input(t("live.ui.resume_label"), type="password", key="live.resume_key")
            st.button(t("live.ui.resume"), key="live.resume", on_click=resume)


def join_expander(where, key: str) -> None:
    """The join box, folded; drawn only once opened."""
    with fold.folded(where, t("live.ui.join_title"), f"live.join_open.{key}", icon=":material/login:") as opened:
        if opened:
            classroom.join_box(key)


def resume() -> None:
    """Button callback: the key pasted in the resume box, checked against the store before anything changes."""
    code, _, key = (st.session_state.get("live.resume_key") or "").strip().partition(KEY_SEPARATOR)
    code = normalize_code(code)
    try:
        owns = code is not None and classroom.store().owns(code, key)
    except classroom.REFUSALS as error:
        st.session_state[NOTICE] = ("warning", classroom.refusal(error))
        return
    if not owns:
        st.session_state[NOTICE] = ("warning", t("live.ui.bad_resume"))
        return
    st.session_state["live.resume_key"] = ""
    take_back(code, key)


def take_back(code: str, key: str) -> None:
    """Teach `code` again from its current link: the presenter reads its state from it on the next run (this is a
    button's callback, so no widget of this run holds those values yet)."""
    now = classroom.store().state(code) or {}
    query = dict(urllib.parse.parse_qsl(now.get("link", ""), keep_blank_values=True))
    query["step"] = str(now.get("step", 1))
    keep = {name: st.query_params[name] for name in ("lang", "palette") if name in st.query_params}
    for scope in ("lab", "present"):  # the presenter reads its state from the link again, as on a first visit
        page = state.SCOPES[scope]
        for name in page.params:
            st.session_state.pop(page.key(name), None)
        st.session_state.pop(f"_loaded.{scope}", None)
    st.session_state[TEACH] = {"code": code, "key": key}
    st.session_state[SYNCED] = (int(query["step"]), now.get("link", ""))
    st.session_state[NOTICE] = ("success", t("live.ui.resumed", code=code))
    st.query_params.from_dict({**query, **keep, classroom.CLASS: code})
