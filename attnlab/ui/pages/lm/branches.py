"""Sampling, branched: the same prefix continued at three temperatures side by side, and going on from any character.

The prefix is the text and the branch (characters chosen so far, kept in the link with the temperatures and the
picked character); the rows use the page's seed, top-k and top-p, and come from one batched call
(`attnlab.lm.branches`), in a fragment of their own. Each character is coloured by the probability it was drawn
with, outlined where the rows part, dotted where it was not the greedy choice (the hover names both). A click picks a
character: its alternatives (the model's own five likeliest there, marked where the row's sampler had cut them)
become buttons that go on from there, and any character the vocabulary has can be typed instead. Drawn only while
its section is open.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab.figures.lm_grids import branches_figure
from attnlab.limits import MAX_LM_TEMPERATURE
from attnlab.lm import LanguageModel
from attnlab.lmlab.branching import BRANCH_CHARS, Branching, room
from attnlab.lmlab.reading import Reading, shown
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import picking_chart
from attnlab.ui.pages.lm.model import LM, alternatives_of, branched, cuts, memo, section_box
from attnlab.ui.pages.lm.predict import WIDTH

OWN = "lm._branch_own"  # the box for a character of the student's own (session only: it becomes the branch)


def section(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The expander; inside, the branches' fragment."""
    box = section_box("branches", t("lm.branches_title"), ":material/call_split:")
    if not box.open:
        return
    with box:
        body(lm, step, got)


@st.fragment
def body(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The temperatures, the branch, the rows and the picked character's alternatives: a fragment, so a new branch,
    temperature or pick reruns only this (the rows' batched call and their chart), not the page."""
    st.caption(t("lm.branches_help", n=BRANCH_CHARS))
    temperatures()
    rows = made(lm, step, got)
    if rows is not None:
        picked(lm, step, rows)
    state.save(LM)


def temperatures() -> None:
    """Three temperature boxes, one per row, written back into the link's `temps`."""
    cols = st.columns(3)
    for i, col in enumerate(cols):
        key = f"lm._temp_{i}"
        st.session_state[key] = float(LM["temps"][i])
        col.number_input(
            t("lm.branch_temperature", row=i + 1),
            min_value=0.0,
            max_value=MAX_LM_TEMPERATURE,
            step=0.1,
            key=key,
            on_change=set_temperature,
            args=(i,),
        )


def set_temperature(i: int) -> None:
    """One row's temperature changed (a box's callback)."""
    temps = list(LM["temps"])
    temps[i] = float(st.session_state[f"lm._temp_{i}"])
    LM["temps"], LM["pick"] = tuple(temps), None


def go_on(forced: str) -> None:
    """Continue from here: the branch becomes `forced` (a button's callback)."""
    LM["branch"], LM["pick"] = forced, None
    st.session_state[OWN] = ""


def made(lm: LanguageModel, step: int | None, got: Reading) -> Branching | None:
    """The branch box and the rows after text + branch, or a message saying why there are none (what was typed
    stays in its box)."""
    cols = st.columns([4, 1], vertical_alignment="bottom")
    cols[0].text_input(t("lm.branch"), key=LM.key("branch"), placeholder=t("lm.branch_empty"), help=t("lm.branch_help"))
    cols[1].button(t("lm.branch_back"), on_click=go_on, args=("",), icon=":material/undo:", key="lm.branch_back")
    text, forced = LM["text"], LM["branch"]
    missing = lm.unknown(forced)
    if missing:
        chars = " ".join(code(c, 8) for c in missing[:12])
        st.warning(t("lm.branch_unknown", chars=chars), icon=":material/translate:")
    left = room(lm, text, forced)
    if got.cut or left < 1:
        n = len(lm.encode(text + forced)) - (1 if lm.vocab.bos_id is not None else 0)
        st.warning(t("lm.branch_past", n=n, cap=lm.max_len - 1), icon=":material/content_cut:")
        return None
    if left < BRANCH_CHARS:
        st.caption(t("lm.branch_fewer", n=left, cap=lm.max_len - 1))
    got_rows = branched(LM["model"], step, text, forced, tuple(LM["temps"]), LM["seed"], cuts(say=False))
    inputs = (LM["model"], step, text, forced, tuple(LM["temps"]), LM["seed"], cuts(say=False), LM["pick"])
    clickable(memo("branches", inputs, lambda: figure(lm, got_rows)))
    off = [sum(s.token_id != s.argmax for s in row.steps) for row in got_rows.rows]
    said = " · ".join(
        t("lm.branch_off", row=row_name(temp), k=k, n=got_rows.n) for temp, k in zip(LM["temps"], off, strict=True)
    )
    st.caption(said)
    return got_rows


def row_name(temperature: float) -> str:
    """'T = 0.7', or 'T = 0 (greedy)'."""
    return t("lm.branch_greedy") if temperature == 0 else t("lm.branch_row", temperature=f"{temperature:g}")


def figure(lm: LanguageModel, got: Branching):
    """The rows for this session's language and palette."""
    chars = [[shown(s.token) for s in row.steps] for row in got.rows]
    probs = np.array([[s.probs[s.token_id] for s in row.steps] for row in got.rows])
    greedy = [[shown(lm.token(s.argmax)) for s in row.steps] for row in got.rows]
    greedy_p = np.array([[s.probs[s.argmax] for s in row.steps] for row in got.rows])
    off = np.array([[s.token_id != s.argmax for s in row.steps] for row in got.rows])
    fields = dict(i="%{customdata[2]}", drawn="%{customdata[3]}", p="%{customdata[4]:.2f}")
    sentence = t("lm.branch_cell", row="{name}", **fields, greedy="%{customdata[5]}", q="%{customdata[6]:.2f}")
    names = [f"T={temp:g}" for temp in got.temperatures]  # short: a phone's grid needs the width
    pick = LM["pick"]
    at = None if pick is None else (pick[0] - 1, pick[1] - 1)
    words = (t("lm.prob_word"), t("lm.off_greedy"))
    return branches_figure(chars, probs, (greedy, greedy_p, off), names, sentence, got.parted, WIDTH, at, *words)


def clickable(figure) -> None:
    """The rows; a click on a character picks it (its alternatives below)."""

    def chosen(data) -> None:
        LM["pick"] = (int(data[0]) + 1, int(data[1]) + 1)

    picking_chart(figure, LM.key("branch_chart"), chosen)


def picked(lm: LanguageModel, checkpoint: int | None, got: Branching) -> None:
    """The picked character's alternatives as buttons that go on from there, and a box for one's own character."""
    pick = LM["pick"]
    if pick is None:
        st.caption(t("lm.branch_pick_help"))
        return
    r, i = pick
    if r > len(got.rows) or i > got.n:
        st.warning(t("lm.branch_pick_past", pick=code(f"{r}.{i}"), rows=len(got.rows), n=got.n), icon=":material/info:")
        return
    row = got.rows[r - 1]
    step = row.steps[i - 1]
    before = LM["branch"] + row.text[: len(lm.decode([s.token_id for s in row.steps[: i - 1]]))]
    st.markdown(
        t(
            "lm.branch_picked",
            i=i,
            row=row_name(got.temperatures[r - 1]),
            drawn=code(shown(step.token), 8),
            greedy=code(shown(lm.token(step.argmax)), 8),
        )
    )
    options = alternatives_of(LM["model"], checkpoint, LM["text"] + before)
    cols = st.columns(len(options) + 1)
    for k, ((i, token, p), col) in enumerate(zip(options, cols, strict=False)):
        label = f"{shown(token)} {p:.2f}" + ("" if step.probs[i] > 0 else " ✂")
        col.button(label, on_click=go_on, args=(before + token,), key=f"lm.alt_{k}")
    st.caption(t("lm.branch_alt_help"))
    typed = cols[-1].text_input(t("lm.branch_own"), key=OWN, max_chars=8, placeholder="…")
    if typed:
        try:
            lm.token_id(typed)
        except ValueError:
            st.warning(t("lm.branch_own_unknown", typed=code(typed, 8)), icon=":material/translate:")
            return
        st.button(t("lm.branch_go", char=shown(typed)), on_click=go_on, args=(before + typed,), key="lm.alt_own")
