"""Training, scrubbed: the checkpoint slider, the recorded losses, the heads' scores along training.

The slider sets the checkpoint every section of the page follows. Where does copying appear?

The losses are the run's own `log.json` (held-out loss and contract 16's copy measures per checkpoint) with the
final n-gram baselines from `metrics.json`; the heads' scores are measured here at every checkpoint on one probe
(the model's first text written twice), once per server (`st.cache_data`), since the log does not hold them.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from attnlab.figures.decoder import curves_figure
from attnlab.lm import LanguageModel
from attnlab.lmlab.finder import SCORES
from attnlab.lmlab.history import Checkpoint, along_training, copying_from, held_out_of, logged, probe_of
from attnlab.lmlab.texts import first_text
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import chart
from attnlab.ui.pages.lm.model import LM, memo, model, run_numbers
from attnlab.ui.pages.lm.sinks import passage_lang


@st.cache_data(show_spinner=False, max_entries=8)
def history(name: str, steps: tuple[int, ...], lang: str) -> list[Checkpoint]:
    """Every checkpoint's head scores and copy losses on the probe (numbers only, once per server)."""
    return along_training(lambda step: model(name, step), list(steps), probe_of(first_text(lang)))


def section(lm: LanguageModel, step: int | None) -> None:
    """The slider over the checkpoints, the loss curves, copying, and every head's score along training (under the
    section's title, which its fold shows)."""
    if not lm.steps:
        st.caption(t("lm.no_training"))
        return
    labels = {s: f"{s:,}" for s in lm.steps}
    st.select_slider(
        t("lm.step"), options=list(lm.steps), format_func=labels.get, key=LM.key("step"), help=t("lm.step_help")
    )
    records = logged(lm.folder)
    losses(records, step)
    copying(records, step)
    lang = passage_lang(lm)
    heads(lm, history(LM["model"], tuple(lm.steps), lang), step)


def losses(records: list[dict], step: int) -> None:
    """The held-out loss at every checkpoint, the final unigram and bigram baselines as flat lines."""
    if not records:
        return
    steps = [r["step"] for r in records]
    series = [(t("lm.held_out"), [held_out_of(r) for r in records])]
    metrics = run_numbers(model(LM["model"])) or {}
    for key in ("bigram_loss", "unigram_loss"):
        if key in metrics:
            series.append((t(f"lm.{key}"), [metrics[key]] * len(steps)))
    build = partial(curves_figure, steps, series, step, t("lm.curve_loss"), t("lm.step"), t("lm.loss_axis"))
    chart(memo("curve_loss", (LM["model"], step), build), LM.key("curve_loss"))


def copying(records: list[dict], step: int) -> None:
    """Both copies' losses along training (random strings and held-out passages), and where copying appears."""
    have = [r for r in records if "copy_loss_first" in r]
    if not have:
        return
    steps = [r["step"] for r in have]
    series = [
        (t(f"lm.{key}"), [r.get(key) for r in have])
        for key in ("copy_loss_first", "copy_loss_second", "copy_passage_first", "copy_passage_second")
    ]
    build = partial(curves_figure, steps, series, step, t("lm.curve_copy"), t("lm.step"), t("lm.loss_axis"))
    chart(memo("curve_copy", (LM["model"], step), build), LM.key("curve_copy"))
    found = copying_from(have)
    gain = have[-1]["copy_loss_first"] - have[-1]["copy_loss_second"]
    if found is None:
        st.markdown(t("lm.copy_never", gain=f"{gain:.2f}"))
    else:
        st.markdown(t("lm.copy_appears", step=f"{found:,}", gain=f"{gain:.2f}"))


def heads(lm: LanguageModel, marks: list[Checkpoint], step: int) -> None:
    """One score of every head at every checkpoint, on the probe."""
    labels = {k: t(f"lm.score_{k}") for k in SCORES}
    kind = st.radio(t("lm.score_pick"), SCORES, format_func=labels.get, key="lm.score_curve", index=3, horizontal=True)
    steps = [c.step for c in marks]
    series = [
        (
            f"{layer + 1}.{h + 1}",
            [None if np.isnan(c.scores[kind][layer, h]) else c.scores[kind][layer, h] for c in marks],
        )
        for layer in range(lm.n_layers)
        for h in range(lm.n_heads)
    ]
    title = t("lm.curve_heads", score=t(f"lm.score_{kind}"))
    build = partial(curves_figure, steps, series, step, title, t("lm.step"), t("lm.score_axis"), (0, 1))
    chart(memo("curve_heads", (LM["model"], step, kind), build), LM.key("curve_heads"))
    st.caption(t("lm.curve_heads_help"))
