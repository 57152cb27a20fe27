"""The Trained decoder page's "train it yourself" section: start a short capped run, watch its loss live.

The run belongs to the server's one `RUNNER` (its own thread, a fixed time budget); this session polls it
with a fragment that reruns every second only while its own run is going, so no other session waits on it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import streamlit as st
import torch

from attnlab.figures.decoder import curves_figure
from attnlab.limits import INDUCTION_CLEAR, LIVE_TRAIN_BUDGET_S, TRAINED_LIVE_MAX_STEPS
from attnlab.trained.training import LIVE_CHANGES, SCORE_EVERY, Recipe, train_live
from attnlab.ui.app import fold
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import session_id
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart
from attnlab.ui.pages.decoder.live import RUNNER, Progress
from attnlab.ui.pages.decoder.sections import DECODER

POLL_S = 1.0  # how often a session watching its own run redraws the progress
N_HEADS = Recipe(n_layers=1).n_heads  # both recipes keep the default head count (splits the flat score rows)


def train_steps(recipe: str, steps: int, seed: int) -> Iterator[tuple[int, float]]:
    """The core's step-wise trainer as (step, loss) pairs; closing the iterator cancels the training."""
    out: queue.Queue = queue.Queue()
    cancel = threading.Event()

    def work() -> None:
        # One intra-op thread for this worker thread only (OpenMP keeps the setting per thread, so the server's
        # other threads keep theirs): on the 2-core server, two threads fighting the page's own work made a step
        # about ten times slower and the run ran out of its budget before the change.
        torch.set_num_threads(1)
        try:
            train_live(recipe, steps, lambda s, losses: out.put((s, losses)), cancel, seed)
            out.put(None)
        except Exception as failure:  # noqa: BLE001 -- handed to the runner, which says it and frees the slot
            out.put(failure)

    threading.Thread(target=work, daemon=True, name="attnlab-train").start()
    try:
        while (item := out.get()) is not None:
            if isinstance(item, Exception):
                raise item
            step, losses = item
            yield step, float(losses["loss_repeat"]), losses.get("induction")
    finally:
        cancel.set()


def start(recipe: str) -> None:
    """Start this session's run, or say the server is busy and for about how long (a button's callback)."""
    n, seed = st.session_state["decoder.live_steps"], st.session_state["decoder.live_seed"]
    if not RUNNER.start(session_id(), n, lambda: train_steps(recipe, n, seed)):
        st.session_state["decoder.live_busy"] = RUNNER.snapshot().left_s(time.monotonic(), RUNNER.budget_s)


def section(recipe: str) -> None:
    """The run of your own, folded until opened (`fold.section`); a run goes on in its thread while it is shut."""
    with fold.section(DECODER, "yours", t("decoder.yours"), icon=":material/model_training:") as drawn:
        if drawn:
            controls(recipe)


def controls(recipe: str) -> None:
    """Steps and seed, the start button, then this session's run (live while it goes) or the busy message."""
    st.caption(
        t("decoder.yours_help", cap=TRAINED_LIVE_MAX_STEPS, budget=round(LIVE_TRAIN_BUDGET_S), recipe=code(recipe))
    )
    st.caption(t("livetrain.variant", length=LIVE_CHANGES["length"], lr=LIVE_CHANGES["lr"], every=SCORE_EVERY))
    cols = st.columns(3)
    cols[0].number_input(
        t("decoder.live_steps"), 1, TRAINED_LIVE_MAX_STEPS, min(200, TRAINED_LIVE_MAX_STEPS), key="decoder.live_steps"
    )
    cols[1].number_input(t("common.seed"), 0, 2**31 - 1, 0, key="decoder.live_seed")
    p = RUNNER.snapshot()
    mine = p.owner == session_id()
    cols[2].button(
        t("decoder.live_start"),
        on_click=start,
        args=(recipe,),
        disabled=mine and p.running,
        icon=":material/play_arrow:",
    )
    busy = st.session_state.pop("decoder.live_busy", None)
    if busy is not None:
        st.warning(t("decoder.live_busy", seconds=busy), icon=":material/hourglass_top:")
    if mine and p.running:
        live()
    elif mine and p.ended:
        draw(p)


@st.fragment(run_every=POLL_S)
def live() -> None:
    """This session's run while it goes: redrawn every second; a full rerun once it ends stops the polling."""
    p = RUNNER.snapshot()
    draw(p)
    if not p.running:
        st.rerun()


def draw(p: Progress) -> None:
    """The progress bar, how the run ended, and its loss so far."""
    st.progress(min(p.done / max(p.total, 1), 1.0), text=t("decoder.live_progress", done=p.done, total=p.total))
    if p.ended.startswith("failed"):
        st.error(t("decoder.live_failed", detail=code(p.ended.removeprefix("failed: "), 200)))
    elif p.ended == "budget":
        st.info(t("decoder.live_budget", budget=round(LIVE_TRAIN_BUDGET_S), done=p.done))
    elif p.ended == "done":
        st.success(t("decoder.live_done", total=p.total, loss=f"{p.losses[-1]:.3f}"))
    if not p.steps:
        return
    change = p.change(INDUCTION_CLEAR)
    marks = [] if change is None else [(change[0], t("livetrain.mark"))]
    series = [(t("decoder.live_loss"), list(p.losses))]
    fig = curves_figure(
        list(p.steps), series, p.done, t("decoder.live_curve"), t("decoder.step"), t("decoder.nats"), marks=marks
    )
    chart(fig, "decoder.live_chart")
    if p.scores:
        scores(p, change, marks)


def scores(p: Progress, change: tuple[int, int, float] | None, marks: list) -> None:
    """Every head's induction score so far, and the change said with its numbers (or that it has not come yet)."""
    heads = len(p.scores[0]) // N_HEADS
    names = [f"{ly + 1}.{hd + 1}" for ly in range(heads) for hd in range(N_HEADS)]
    series = [(t("decoder.head_title", name=n), [row[i] for row in p.scores]) for i, n in enumerate(names)]
    title = t("livetrain.scores_curve")
    fig = curves_figure(
        list(p.score_steps), series, p.done, title, t("decoder.step"), t("decoder.score"), (0, 1), marks
    )
    chart(fig, "decoder.live_scores")
    last = p.scores[-1]
    best = max(range(len(last)), key=last.__getitem__)
    if change is None:
        st.caption(t("livetrain.not_yet", head=names[best], score=f"{last[best]:.2f}", clear=INDUCTION_CLEAR))
        return
    step, head, score = change
    before = p.losses[p.steps.index(step)] if step in p.steps else p.losses[0]
    st.markdown(
        t(
            "livetrain.changed",
            step=step,
            head=names[head],
            score=f"{score:.2f}",
            clear=INDUCTION_CLEAR,
            first=f"{p.losses[0]:.2f}",
            at=f"{before:.2f}",
            last=f"{p.losses[-1]:.2f}",
        )
    )
