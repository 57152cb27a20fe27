"""Next-character prediction: the text painted by its loss, the ten likeliest next characters anywhere, generation.

A click on a character of the painted text (or the position box) picks the prediction the model made for it,
from the text before it; position 0 is after the whole text. The temperature, the top ten and generation sit in
one fragment, so a generation step reruns only them: each step is one cached model step
(`attnlab.lm.extend` on the generation kept for the step before).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from attnlab.figures.lm import loss_text_figure, top_figure
from attnlab.limits import MAX_LM_PAGE_GEN
from attnlab.lm import LanguageModel
from attnlab.lmlab.finder import line_period
from attnlab.lmlab.reading import Reading, shown
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, chart_config, number, selectbox, slider
from attnlab.ui.pages.lm.model import LM, generation, memo, top

WIDTH = 16  # characters per line of the painted text at most: readable at 390 px
KEEP = "lm._keep"  # set by the Keep button's callback: the whole page reruns with the longer text


def section(lm: LanguageModel, step: int | None, got: Reading, rest: bool = True) -> None:
    """The painted text and the position picker, then (`rest`) the fragment with the predictions and generation."""
    st.subheader(t("lm.predict_title"))
    mean = got.mean_loss()
    st.caption(t("lm.predict_help", n=len(got.losses), mean=f"{mean:.2f}", ppl=f"{2.718281828**mean:.1f}"))
    if LM["q"] > got.n_tokens - 1:
        LM["q"] = 0  # a link made for a longer text: after the whole text
    painted(got)
    options = {0: t("lm.after_all")} | {
        i: t("lm.before", i=i, piece=shown(got.pieces[i])) for i in range(1, got.n_tokens)
    }
    selectbox(LM, "q", t("lm.position"), options=list(options), labels=options, help=t("lm.position_help"))
    if rest:
        predictions(lm, step, got)


def painted(got: Reading) -> None:
    """The text's pieces coloured by their loss; a click on one picks the prediction made for it."""
    key = LM.key("painted")
    q = LM["q"]
    # token i + 1 is painted with losses[i], the loss of the prediction made for it (q = i + 1)
    period = line_period(got.pieces, got.lead)  # a regular poem wraps at whole lines: a couplet a row
    width = period * max(1, WIDTH // period) if period else WIDTH
    figure = loss_text_figure(
        got.labels[1:], got.losses, got.guesses, width, q - 1 if q else None, t("lm.loss_word"), t("lm.expected_word")
    )

    def picked() -> None:
        points = st.session_state[key]["selection"]["points"]
        chosen = [p["customdata"] for p in points if p.get("customdata") is not None]
        if chosen:
            LM["q"] = int(chosen[0]) + 1

    st.plotly_chart(
        figure.mounted_once(),
        width="stretch",
        on_select=picked,
        selection_mode="points",
        key=key,
        config=chart_config(key, image_only=True),
        theme=None,
    )


@st.fragment
def predictions(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The ten likeliest next characters at the picked position and temperature; then one character at a time."""
    if st.session_state.pop(KEEP, False):
        st.rerun(scope="app")
    slider(LM, "temperature", t("lm.temperature"), step=0.05, help=t("lm.temperature_help"))
    temperature, q = LM["temperature"], LM["q"]
    row = got.n_tokens - 1 if q == 0 else q - 1  # the position whose next token is predicted
    best = top(LM["model"], step, got.ids, row, temperature, got)
    names = (t("lm.p_model"), t("lm.p_tempered", temperature=f"{temperature:g}"))
    tempered = best.tempered if temperature not in (0, 1) else None
    where = t("lm.top_end") if q == 0 else t("lm.top_at", i=q, piece=shown(got.pieces[q]))
    inputs = (LM["model"], step, got.ids, row, temperature)  # a generation step leaves them as they were
    build = partial(top_figure, [shown(x) for x in best.tokens], best.probs, tempered, names, where)
    chart(memo("top", inputs, build), LM.key("top"))
    if q:
        actual = got.pieces[q]
        st.caption(t("lm.actual", piece=code(shown(actual), 12), loss=f"{got.losses[q - 1]:.2f}"))
    generate(lm, step, got)
    state.save(LM)


def grow(by: int, room: int) -> None:
    """One more character, or none (a button's callback, before the fragment runs)."""
    LM["gen"] = 0 if by == 0 else min(LM["gen"] + by, room)


def keep(text: str) -> None:
    """The generated characters become part of the text (the Keep button's callback)."""
    LM["text"], LM["gen"], LM["q"] = text, 0, 0
    st.session_state[KEEP] = True


def generate(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """Greedy (temperature 0) or sampled with the seed: one character per press, each with its probability."""
    st.markdown(f"**{t('lm.generate_title')}**")
    room = min(MAX_LM_PAGE_GEN, lm.max_len - got.n_tokens)
    if room < 1 or got.cut:
        st.info(t("lm.no_room", cap=lm.max_len), icon=":material/content_cut:")
        return
    LM["gen"] = min(LM["gen"], room)
    cols = st.columns([1, 1, 1, 1], vertical_alignment="bottom")
    cols[0].button(
        t("lm.next"),
        on_click=grow,
        args=(1, room),
        icon=":material/skip_next:",
        key="lm.next_button",
        disabled=LM["gen"] >= room,
    )
    cols[1].button(t("lm.restart"), on_click=grow, args=(0, room), icon=":material/restart_alt:", key="lm.restart")
    sampled = LM["temperature"] > 0
    number(LM, "seed", t("common.seed"), where=cols[2], disabled=not sampled, help=t("lm.seed_help"))
    n = LM["gen"]
    if n == 0:
        st.caption(t("lm.generate_help"))
        return
    prompt = LM["text"]  # read whole (not cut: there is room)
    for k in range(1, n + 1):  # each a cache hit but the newest: one step from the one before
        made = generation(LM["model"], step, prompt, LM["temperature"], LM["seed"], k)
    cols[3].button(t("lm.keep"), on_click=keep, args=(prompt + made.text,), icon=":material/done:", key="lm.keep")
    picks = " → ".join(f"{code(shown(s.token), 8)} ({s.probs[s.token_id]:.2f})" for s in made.steps[-8:])
    mode = t("lm.sampled", temperature=f"{LM['temperature']:g}", seed=LM["seed"]) if sampled else t("lm.greedy")
    st.markdown(t("lm.generated", n=n, text=code(made.text.replace("\n", "↵"), 200), mode=mode))
    st.caption(t("lm.picks", picks=picks))
