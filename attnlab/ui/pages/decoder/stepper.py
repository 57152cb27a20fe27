"""The Trained decoder page's generation stepper: one symbol at a time, the key/value cache growing by a row.

The generation is an `st.cache_resource` value keyed on the model, checkpoint, prompt and zeroed heads, shared
read-only by every session; the measured step times are cached numbers; text and figures are built per session.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import streamlit as st

from attnlab import trained
from attnlab.figures import dim_labels, matrix_figure
from attnlab.limits import DECODER_GEN_STEPS, MAX_DECODER_RUNS
from attnlab.trained.generation import step_cost, step_times
from attnlab.trained.patching import period
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, slider
from attnlab.ui.pages.decoder import window
from attnlab.ui.pages.decoder.sections import DECODER, decoder, head_name

TOP = 5  # predictions listed per step
TIMING_REPEATS = 10  # steps timed per measurement (the median is shown)


@st.cache_resource(show_spinner=False, max_entries=MAX_DECODER_RUNS)
def generation(
    model: str, step: int, prompt: tuple[str, ...], ablate: tuple, n: int, window: int | None = None, sinks: int = 0
) -> list[trained.CacheStep]:
    """n greedy steps with the cache (a window cache when asked), shared read-only by every session asking the same."""
    return trained.generate(decoder(model, step), list(prompt), n, ablate, window=window, sinks=sinks)


@st.cache_data(show_spinner=False, max_entries=MAX_DECODER_RUNS)
def timing(model: str, step: int, prefix: tuple[str, ...]) -> tuple[float, float]:
    """Median seconds of one step at this prefix, with the cache and without (numbers only)."""
    return step_times(decoder(model, step), list(prefix), TIMING_REPEATS)


def move(by: int, n: int) -> None:
    """Step back or forward (a button's callback, before the slider is drawn)."""
    DECODER["gen"] = min(max(DECODER["gen"] + by, 1), n)


def section(model: trained.Decoder, step: int, symbols: list[str], ablate: tuple) -> None:
    """Pick a step, then the new token, its query row, the cache's K and V, the attention row, guesses and cost."""
    name = DECODER["model"]
    n = min(DECODER_GEN_STEPS, model.max_len - len(symbols))
    if n < 1:
        st.info(t("patching.gen_no_room", cap=model.max_len), icon=":material/content_cut:")
        return
    cache_window, sinks = window.controls()
    steps = generation(name, step, tuple(symbols), ablate, n, cache_window, sinks)
    DECODER["gen"] = min(DECODER["gen"], n)
    cols = st.columns([1, 1, 6])
    cols[0].button(t("patching.gen_back"), on_click=move, args=(-1, n), icon=":material/skip_previous:")
    cols[1].button(t("patching.gen_next"), on_click=move, args=(1, n), icon=":material/skip_next:")
    if n > 1:
        slider(DECODER, "gen", t("patching.gen_step"), where=cols[2], hi=n)
    i = DECODER["gen"]
    s = steps[i - 1]
    tokens = [model.start, *symbols, *(x.symbol for x in steps[: i - 1])]  # what the cache holds after this step
    story(model, symbols, steps, i, tokens, windowed=cache_window is not None)
    runs = functools.partial(generation, name, step, tuple(symbols), ablate, n)  # runs(window, sinks)
    window.accuracy(symbols, runs, cache_window, sinks)
    layer, head = pick_head(model)
    draw_step(s, tokens, layer, head)
    guesses(model, s)
    cost(name, step, model, tokens)


def story(model: trained.Decoder, symbols: list[str], steps: list, i: int, tokens: list[str], windowed: bool) -> None:
    """What this step did, and how the whole continuation relates to the prompt's period, from the numbers (with a
    window, the window's own section counts the continuation against the period and the whole cache instead)."""
    s = steps[i - 1]
    made = " ".join(code(x.symbol, 20) for x in steps[:i])
    st.markdown(
        t(
            "patching.gen_story",
            i=i,
            n=len(steps),
            token=code(s.token, 20),
            t=len(s.positions),
            symbol=code(s.symbol, 20),
            p=f"{float(s.probs.max()):.2f}",
            made=made,
        )
    )
    p = period(symbols)
    if p is None:
        st.caption(t("patching.gen_no_period"))
        return
    if windowed:
        return
    whole = symbols + [x.symbol for x in steps]
    kept = sum(whole[len(symbols) + j] == whole[len(symbols) + j - p] for j in range(len(steps)))
    key = "patching.gen_period_1l" if model.n_layers == 1 else "patching.gen_period"
    st.caption(t(key, kept=kept, n=len(steps), p=p))


def pick_head(model: trained.Decoder) -> tuple[int, int]:
    """The head whose cache is drawn (default: the last layer's first head)."""
    names = [head_name(ly, hd) for ly in range(model.n_layers) for hd in range(model.n_heads)]
    key = "decoder.gen_head"
    if st.session_state.get(key) not in names:
        st.session_state[key] = head_name(model.n_layers - 1, 0)
    picked = st.selectbox(t("patching.gen_head"), names, key=key)
    return tuple(int(x) - 1 for x in picked.split("."))


def draw_step(s: trained.CacheStep, tokens: list[str], layer: int, head: int) -> None:
    """The new query row, K and V with their new row outlined, and the query's weights over the cache; with a
    window that has evicted tokens, every token so far is drawn and the evicted ones are greyed."""
    new, d = len(tokens) - 1, s.query.shape[-1]
    st.markdown(f"**{t('patching.gen_query', token=code(s.token, 20))}**")
    chart(matrix_figure(s.query[layer, head][None], [s.token], dim_labels(d)), "decoder.gen.q")
    evicted = len(s.positions) < len(tokens)
    keys, values, weights, kept = window.cached(s, len(tokens)) if evicted else (s.keys, s.values, s.weights, None)
    window.kept_note(s, tokens)
    cols = st.columns(2)
    for col, (label, m) in zip(cols, (("K", keys), ("V", values)), strict=True):
        with col:
            st.markdown(f"**{t('patching.gen_cache', name=label, t=len(s.positions))}**")
            if evicted:
                fig = window.matrix(m[layer, head], tokens, dim_labels(d), kept[:, None], highlight_row=new)
            else:
                fig = matrix_figure(m[layer, head], tokens, dim_labels(d), highlight_row=new)
            chart(fig, f"decoder.gen.{label}")
    st.markdown(f"**{t('patching.gen_weights', token=code(s.token, 20), t=len(s.positions))}**")
    row = weights[layer, head][None]
    if evicted:
        chart(window.matrix(row, [s.token], tokens, kept[None], kind="prob"), "decoder.gen.w")
    else:
        chart(matrix_figure(row, [s.token], tokens, kind="prob"), "decoder.gen.w")
    st.caption(t("patching.gen_mask"))


def guesses(model: trained.Decoder, s: trained.CacheStep) -> None:
    """The most probable next symbols at this step."""
    best = np.argsort(-s.probs, kind="stable")[:TOP]
    rows = [{t("patching.gen_col_symbol"): model.vocab[j], t("patching.gen_col_p"): f"{s.probs[j]:.3f}"} for j in best]
    st.markdown(f"**{t('patching.gen_top')}**")
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def cost(name: str, step: int, model: trained.Decoder, tokens: list[str]) -> None:
    """Multiply-adds counted from the shapes and times measured now, with the cache and without."""
    c = step_cost(model, len(tokens))
    fast, slow = timing(name, step, tuple(tokens[1:]))
    st.markdown(f"**{t('patching.gen_cost')}**")
    cols = st.columns(4)
    cols[0].metric(t("patching.gen_ops_cache"), f"{c.with_cache:,}")
    cols[1].metric(t("patching.gen_ops_full"), f"{c.without_cache:,}")
    cols[2].metric(t("patching.gen_ms_cache"), f"{fast * 1e3:.2f}")
    cols[3].metric(t("patching.gen_ms_full"), f"{slow * 1e3:.2f}")
    ops, time_ratio = c.saving, slow / fast
    st.caption(
        t("patching.gen_cost_note", t=len(tokens), ops=f"{ops:.0f}", time=f"{time_ratio:.1f}", floats=c.cache_floats)
    )
    if time_ratio < ops / 4:
        st.caption(t("patching.gen_overhead", ops=f"{ops:.0f}", time=f"{time_ratio:.1f}"))
