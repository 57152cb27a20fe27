"""The generation stepper's window cache (contract 14): its controls, what the cache still holds, what it forgets.

The generations compared are the stepper's own `st.cache_resource` values (keyed on window and sinks too); the
accuracies are counted from them on every run, and every sentence is chosen by those counts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from attnlab import trained
from attnlab.figures.kvcache import kept_figure
from attnlab.trained.patching import period
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import number, optional_number
from attnlab.ui.pages.decoder.sections import DECODER

STREAMING_SINKS = 4  # the sinks compared when none are asked for: StreamingLLM keeps the first 4 tokens


def controls() -> tuple[int | None, int]:
    """The window (empty: the whole cache) and the sinks it keeps; sinks without a window are said to do nothing."""
    cols = st.columns([1, 1, 3], vertical_alignment="bottom")
    optional_number(
        DECODER,
        "window",
        t("decoder_window.window"),
        empty=t("decoder_window.whole"),
        where=cols[0],
        help=t("decoder_window.window_help"),
    )
    number(DECODER, "sinks", t("decoder_window.sinks"), where=cols[1], help=t("decoder_window.sinks_help"))
    window, sinks = DECODER["window"], DECODER["sinks"]
    if window is None and sinks:
        cols[2].caption(t("decoder_window.sinks_alone"))
    return window, sinks if window is not None else 0


def truth(symbols: list[str], n: int) -> list[str] | None:
    """The prompt's period continued for n symbols, or None when the prompt repeats no period."""
    p = period(symbols)
    if p is None:
        return None
    whole = list(symbols)
    for _ in range(n):
        whole.append(whole[-p])
    return whole[len(symbols) :]


def right(steps: list[trained.CacheStep], want: list[str]) -> int:
    """How many generated symbols continue the period."""
    return sum(s.symbol == w for s, w in zip(steps, want, strict=True))


def accuracy(symbols: list[str], generate: Callable[[int | None, int], list], window: int | None, sinks: int) -> None:
    """The continuation's accuracy with the whole cache and with this window; then with and without sinks."""
    n = len(generate(None, 0))
    want = truth(symbols, n)
    if want is None:
        return
    full = right(generate(None, 0), want)
    st.markdown(f"**{t('decoder_window.accuracy')}**")
    if window is None:
        st.caption(t("decoder_window.full_only", right=full, n=n))
        return
    p, yours = period(symbols), right(generate(window, sinks), want)
    other = 0 if sinks else STREAMING_SINKS
    theirs = right(generate(window, other), want)
    cols = st.columns(3)
    cols[0].metric(t("decoder_window.m_full"), f"{full}/{n}")
    cols[1].metric(t("decoder_window.m_yours", w=window, s=sinks), f"{yours}/{n}", delta=f"{yours - full:+d}")
    cols[2].metric(t("decoder_window.m_other", w=window, s=other), f"{theirs}/{n}", delta=f"{theirs - full:+d}")
    reach = "short" if window < p else "long"
    drop = "drop" if yours < full else "same"
    st.markdown(t(f"decoder_window.{reach}_{drop}", w=window, p=p, full=full, yours=yours, n=n, pts=full - yours))
    with_sinks, without = (yours, theirs) if sinks else (theirs, yours)
    verdict = "help" if with_sinks > without else "hurt" if with_sinks < without else "nothing"
    many = max(sinks, other)
    st.markdown(t(f"decoder_window.verdict_{verdict}", s=many, w=window, a=with_sinks, b=without, n=n))


def cached(s: trained.CacheStep, t_all: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The step's keys, values and weights placed at their positions among all t_all tokens so far (zeros where
    evicted), and which positions the cache still holds."""
    kept = np.zeros(t_all, dtype=bool)
    kept[s.positions] = True
    keys = np.zeros((*s.keys.shape[:2], t_all, s.keys.shape[-1]), dtype=s.keys.dtype)
    values, weights = np.zeros_like(keys), np.zeros((*s.weights.shape[:2], t_all), dtype=s.weights.dtype)
    keys[:, :, s.positions], values[:, :, s.positions], weights[..., s.positions] = s.keys, s.values, s.weights
    return keys, values, weights, kept


def kept_note(s: trained.CacheStep, tokens: list[str]) -> None:
    """Which tokens the cache holds after this step (when the window has evicted some)."""
    if len(s.positions) < len(tokens):
        st.caption(t("decoder_window.holds", kept=len(s.positions), t=len(tokens), gone=len(tokens) - len(s.positions)))


def matrix(m: np.ndarray, rows: list[str], cols: list[str], kept: np.ndarray, **kw):
    """One of the stepper's matrices with the evicted tokens greyed."""
    return kept_figure(m, rows, cols, kept, t("decoder_window.evicted"), **kw)
