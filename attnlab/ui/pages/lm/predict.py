"""Next-character prediction: the text painted by its loss, the ten likeliest next characters anywhere, generation.

A click on a character of the painted text (or the position box) picks the prediction the model made for it,
from the text before it; position 0 is after the whole text. The sampler's settings (temperature, top-k, top-p),
the top ten and generation sit in one fragment, so a generation step reruns only them: each step is one cached
model step (`attnlab.lm.extend` on the generation kept for the step before). The top ten draws the model's own
probabilities and, when the sampler changes them, the distribution it draws from (cut tokens at 0, the rest
renormalised); each generated character is shown with the greedy choice beside it where they differ.
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
from attnlab.ui.app.widgets import chart, number, picking_chart, selectbox, slider
from attnlab.ui.pages.lm.model import LM, cuts, generation, memo, top

WIDTH = 16  # characters per line of the painted text at most: readable at 390 px
KEEP = "lm._keep"  # set by the Keep button's callback: the whole page reruns with the longer text
WHOLE = "lm._whole"  # set when the seed, top-k or top-p change: the branches (outside the fragment) use them too


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

    def picked(data) -> None:
        LM["q"] = int(data) + 1

    picking_chart(figure, key, picked)


@st.fragment
def predictions(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The ten likeliest next characters at the picked position and temperature; then one character at a time."""
    whole = st.session_state.pop(WHOLE, False) and "branches" in LM["open"]
    if st.session_state.pop(KEEP, False) or whole:
        st.rerun(scope="app")
    sampler_controls()
    how = (LM["temperature"], *cuts())
    temperature, q = LM["temperature"], LM["q"]
    row = got.n_tokens - 1 if q == 0 else q - 1  # the position whose next token is predicted
    best = top(LM["model"], step, got.ids, row, how, got)
    changed = temperature not in (0, 1) or how[1:] != (None, None)  # the sampler draws from other numbers
    names = (t("lm.p_model"), sampler_name(how))
    where = t("lm.top_end") if q == 0 else t("lm.top_at", i=q, piece=shown(got.pieces[q]))
    inputs = (LM["model"], step, got.ids, row, how)  # a generation step leaves them as they were
    tops = [shown(x) for x in best.tokens]
    build = partial(top_figure, tops, best.probs, best.tempered if changed else None, names, where)
    chart(memo("top", inputs, build), LM.key("top"))
    if how[1:] != (None, None):
        st.caption(t("lm.kept", n=best.kept, total=lm.cfg.vocab_size, greedy=code(tops[0], 12)))
    if q:
        actual = got.pieces[q]
        st.caption(t("lm.actual", piece=code(shown(actual), 12), loss=f"{got.losses[q - 1]:.2f}"))
    generate(lm, step, got, how)
    state.save(LM)


def sampler_controls() -> None:
    """Temperature, top-k and top-p side by side (stacked on a phone); an empty top-k or top-p box is no cut."""
    cols = st.columns([2, 1, 1], vertical_alignment="bottom")
    slider(LM, "temperature", t("lm.temperature"), where=cols[0], step=0.05, help=t("lm.temperature_help"))
    off = t("lm.no_cut")
    cols[1].number_input(  # 0 allowed in the box: the page says why it cannot be used, keeping what was typed
        t("lm.top_k"),
        min_value=0,
        max_value=int(LM.params["top_k"].hi),
        step=1,
        placeholder=off,
        key=LM.key("top_k"),
        help=t("lm.top_k_help"),
        on_change=shared,
    )
    cols[2].number_input(
        t("lm.top_p"),
        min_value=0.0,
        max_value=1.0,
        step=0.05,
        placeholder=off,
        key=LM.key("top_p"),
        help=t("lm.top_p_help"),
        on_change=shared,
    )


def shared() -> None:
    """A setting the branches share changed (a widget's callback): the fragment reruns the whole page."""
    st.session_state[WHOLE] = True


def sampler_name(how: tuple) -> str:
    """The sampler's series name: its temperature and whichever cuts are on."""
    temperature, top_k, top_p = how
    parts = [t("lm.p_tempered", temperature=f"{temperature:g}")]
    parts += [f"top-k {top_k}"] if top_k is not None else []
    parts += [f"top-p {top_p:g}"] if top_p is not None else []
    return " · ".join(parts)


def grow(by: int, room: int) -> None:
    """One more character, or none (a button's callback, before the fragment runs)."""
    LM["gen"] = 0 if by == 0 else min(LM["gen"] + by, room)


def keep(text: str) -> None:
    """The generated characters become part of the text (the Keep button's callback)."""
    LM["text"], LM["gen"], LM["q"] = text, 0, 0
    st.session_state[KEEP] = True


def generate(lm: LanguageModel, step: int | None, got: Reading, how: tuple) -> None:
    """Greedy (temperature 0) or sampled with the seed: one character per press, each with its probability and the
    greedy choice beside it where the draw was another."""
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
    number(LM, "seed", t("common.seed"), where=cols[2], help=t("lm.seed_help"), on_change=shared)
    n = LM["gen"]
    if n == 0:
        st.caption(t("lm.generate_help"))
        return
    prompt = LM["text"]  # read whole (not cut: there is room)
    for k in range(1, n + 1):  # each a cache hit but the newest: one step from the one before
        made = generation(LM["model"], step, prompt, how, LM["seed"], k)
    cols[3].button(t("lm.keep"), on_click=keep, args=(prompt + made.text,), icon=":material/done:", key="lm.keep")
    picks = " → ".join(pick_text(lm, s) for s in made.steps[-8:])
    mode = t("lm.sampled", temperature=sampler_name(how), seed=LM["seed"]) if sampled else t("lm.greedy")
    st.markdown(t("lm.generated", n=n, text=code(made.text.replace("\n", "↵"), 200), mode=mode))
    st.caption(t("lm.picks", picks=picks))


def pick_text(lm: LanguageModel, s) -> str:
    """One generated character and its probability; the greedy choice and its probability beside it, if another."""
    drawn = f"{code(shown(s.token), 8)} ({s.probs[s.token_id]:.2f})"
    if s.argmax == s.token_id:
        return drawn
    return t("lm.beside_greedy", drawn=drawn, greedy=code(shown(lm.token(s.argmax)), 8), p=f"{s.probs[s.argmax]:.2f}")
