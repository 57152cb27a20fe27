"""The attention sink and the window: StreamingLLM's experiment on this model, on a held-out passage.

The passage (`attnlab.lmlab.texts.held_out`, 640 characters: past twice the shipped runs' context) is read three
ways through the model's own cache (`attnlab.lmlab.streaming`): every token kept, a window of W, and the window
plus the first tokens (the sinks). Each rule's losses are computed once per (model, checkpoint, rule) per server
(`st.cache_data`); the curves, the cache view and every sentence are built per session from those numbers, and
each verdict is chosen by them.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab.figures.kvcache import kept_figure
from attnlab.figures.lm import stream_figure
from attnlab.links.lm import SHIPPED, SINKS
from attnlab.lm import LanguageModel
from attnlab.lmlab.streaming import Stream, running_mean, stream
from attnlab.lmlab.texts import held_out, language_of
from attnlab.ui.app.i18n import current_lang, t
from attnlab.ui.app.widgets import chart, number
from attnlab.ui.pages.lm.model import LM, memo, model

SMOOTH = 32  # the curves are running means over this many characters (one character's loss is noise)
SAME = 0.01  # nats per character: closer than this, two rules are said to do the same


def passage_lang(lm: LanguageModel) -> str:
    """The held-out passage's language: the shipped run's own, else the one the model's vocabulary knows best."""
    return LM["model"] if LM["model"] in SHIPPED else language_of(lm, current_lang())


@st.cache_data(show_spinner=False, max_entries=64)
def streamed(name: str, step: int | None, lang: str, window: int | None, sinks: int) -> Stream:
    """The passage through one cache rule (numbers only): computed once per server for these inputs."""
    lm = model(name, step)
    return stream(lm, tuple(lm.encode(held_out(lang))), window, sinks)  # past the model's length, on purpose


def section(lm: LanguageModel, step: int | None) -> None:
    """The window and sinks, the three curves, what they measured, and what the last character attends to (under the
    section's title, which its fold shows)."""
    cols = st.columns([1, 1, 2], vertical_alignment="bottom")
    number(LM, "window", t("lm.window"), where=cols[0], help=t("lm.window_help"))
    number(LM, "sinks", t("lm.sinks"), where=cols[1], help=t("lm.sinks_input_help"))
    window, asked = LM["window"], LM["sinks"]
    sinks = asked or SINKS  # no sinks asked: compare with StreamingLLM's four
    lang = passage_lang(lm)
    with st.spinner(t("lm.sinks_running")):
        runs = [streamed(LM["model"], step, lang, None, 0), streamed(LM["model"], step, lang, window, 0)]
        runs.append(streamed(LM["model"], step, lang, window, sinks))
    n = len(runs[0].losses)
    st.caption(t("lm.sinks_help", n=n, trained=lm.cfg.max_position_embeddings, smooth=SMOOTH))
    names = [t("lm.rule_whole"), t("lm.rule_window", w=window), t("lm.rule_sinks", w=window, s=sinks)]
    inputs = (LM["model"], step, lang, window, sinks)
    chart(memo("stream", inputs, lambda: curves(lm, runs, names, window + sinks)), LM.key("stream"))
    verdict(lm, runs, window, sinks)
    cache_view(runs, names, inputs)


def curves(lm: LanguageModel, runs: list[Stream], names: list[str], evicts: int):
    """The three running means, the position where the window starts evicting and the training length marked."""
    lines = [(name, running_mean(r.losses, SMOOTH)) for name, r in zip(names, runs, strict=True)]
    marks = [(evicts, t("lm.mark_evict", x=evicts))]
    trained = lm.cfg.max_position_embeddings
    if trained < len(runs[0].losses):
        marks.append((trained, t("lm.mark_trained", x=trained)))
    return stream_figure(lines, marks, t("lm.sinks_chart"), t("lm.position_axis"), t("lm.loss_axis"))


def verdict(lm: LanguageModel, runs: list[Stream], window: int, sinks: int) -> None:
    """The measured means after the window first evicts, and what they say, whichever way they came out."""
    whole = runs[0]
    start = window + sinks  # losses[i] is the loss of token i + 1: from here on the window has evicted
    if start >= len(whole.losses):
        st.info(t("lm.window_too_big", w=window, s=sinks, n=len(whole.losses)), icon=":material/info:")
        return
    means = [r.mean(start) for r in runs]
    cols = st.columns(3)
    cols[0].metric(t("lm.m_whole"), f"{means[0]:.2f}")
    for col, key, value in zip(cols[1:], ("m_window", "m_sinks"), means[1:], strict=True):
        delta = f"{value - means[0]:+.2f}"  # against the whole cache: red when the window costs loss
        col.metric(t(f"lm.{key}", w=window, s=sinks), f"{value:.2f}", delta=delta, delta_color="inverse")
    a, b = means[1], means[2]
    say = "help" if b < a - SAME else "hurt" if b > a + SAME else "nothing"
    st.markdown(t(f"lm.verdict_{say}", w=window, s=sinks, a=f"{a:.2f}", b=f"{b:.2f}", whole=f"{means[0]:.2f}"))
    trained = lm.cfg.max_position_embeddings
    if trained < len(whole.losses):
        inside, past = float(np.mean(whole.losses[:trained])), whole.mean(trained)
        key = "lm.whole_rises" if past > inside + SAME else "lm.whole_holds"
        st.markdown(t(key, trained=trained, a=f"{inside:.2f}", b=f"{past:.2f}"))


def cache_view(runs: list[Stream], names: list[str], inputs: tuple) -> None:
    """The picked head's weights from the passage's last character over every position, evicted ones greyed."""
    layer, head = LM["layer"] - 1, LM["head"] - 1
    n = runs[0].last_weights.shape[-1]
    rows = np.stack([r.last_weights[layer, head] for r in runs])  # (3, T)
    kept = np.stack([r.kept for r in runs])
    st.markdown(f"**{t('lm.cache_title', layer=layer + 1, head=head + 1)}**")
    cols = [str(i) for i in range(n)]
    fig = kept_figure(
        rows,
        names,
        cols,
        kept,
        t("lm.evicted"),
        kind="prob",
        row_name=t("lm.rule"),
        col_name=t("lm.position_axis"),
        text=False,
    )
    chart(fig, LM.key("cache"))
    sink_share = [float(r.last_weights[layer, head, 0]) for r in runs]
    st.caption(t("lm.cache_help", whole=f"{sink_share[0]:.2f}", sinks=f"{sink_share[2]:.2f}"))
