"""The Trained decoder page's parts: the shared models and runs, the URL state, and one function per section.

Models and runs are `st.cache_resource` values keyed on everything that shapes them (recipe, checkpoint,
symbols, ablated heads) and shared read-only by every session; text and figures are built per session.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attnlab import links, trained
from attnlab.figures import dim_labels, matrix_figure
from attnlab.figures.decoder import curves_figure, layer_heads_figure
from attnlab.limits import INDUCTION_CLEAR, MAX_DECODER_RUNS
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, shape_text
from attnlab.ui.pages.decoder.numbers import (
    Prediction,
    accuracy_on_repeats,
    mean_losses,
    parse_symbols,
    random_repeating,
    strongest_induction,
)
from attnlab.ui.parts.stages import STAGES, StageView, draw

MODELS, LAST, DEFAULT_SEQ = links.DECODER_MODELS, links.LAST, links.DECODER_SEQ  # recipes, `step=-1`, first input
DECODER = PageState("decoder", links.params("decoder"))
INSIDE, CORRUPTIONS, SHIPPED_HEADS = links.DECODER_INSIDE, links.DECODER_CORRUPTIONS, links.SHIPPED_HEADS
SCORES = ("previous", "duplicate", "induction")  # the head scores log.json keeps per checkpoint


@st.cache_resource(show_spinner=False, max_entries=64)
def decoder(model: str, step: int | None = None) -> trained.Decoder:
    """One checkpoint of a shipped recipe, loaded once per server process and shared read-only."""
    return trained.load(MODELS[model], step)


@st.cache_resource(show_spinner=False, max_entries=MAX_DECODER_RUNS)
def run_of(model: str, step: int, symbols: tuple[str, ...], ablate: tuple[tuple[int, int], ...]) -> trained.DecoderRun:
    """One sequence through one checkpoint with some heads zeroed, shared by every session asking the same."""
    return decoder(model, step).run(list(symbols), ablate=ablate)


def head_name(layer: int, head: int) -> str:
    """'2.1': layer and head counted from 1, as the page shows them."""
    return f"{layer + 1}.{head + 1}"


def checkpoint() -> int:
    """The URL's step as a checkpoint: -1 is the last one; any other non-checkpoint is replaced and said."""
    steps = list(decoder(DECODER["model"]).steps)
    asked = DECODER["step"]
    if asked == LAST:
        DECODER["step"] = steps[-1]
    elif asked not in steps:
        DECODER["step"] = min(steps, key=lambda s: (abs(s - asked), s))
        DECODER.add_problem("decoder.not_checkpoint", asked=f"step={asked}", used=DECODER["step"])
    return DECODER["step"]


def symbols_or_say(model: trained.Decoder) -> list[str] | None:
    """The typed symbols, or a message in the user's language (the typed text stays in its box)."""
    symbols = parse_symbols(DECODER["seq"])
    problem = model.problem(symbols)
    if problem is None:
        return symbols
    reason, fields = problem
    if reason == "empty":
        st.info(t("decoder.empty"), icon=":material/edit:")
    elif reason == "unknown":
        unknown = fields["unknown"]
        shown = " ".join(code(s, 20) for s in unknown[:8])
        st.error(t("decoder.unknown", n=len(unknown), symbols=shown, vocab=code(" ".join(model.vocab), 200)))
    else:
        st.error(t("decoder.too_long", **fields), icon=":material/content_cut:")
    return None


def run_or_say(step: int, symbols: list[str], ablate: tuple) -> trained.DecoderRun | None:
    """The run, or the model's own refusal shown as text (a symbol the page's checks let through)."""
    try:
        return run_of(DECODER["model"], step, tuple(symbols), ablate)
    except trained.SymbolError as refused:
        st.error(t("decoder.refused", detail=code(str(refused), 200)))
        return None


def ablated(model: trained.Decoder) -> tuple[tuple[int, int], ...]:
    """The heads the user ticked to zero, as (layer, head) pairs counted from 0."""
    names = {head_name(lay, h): (lay, h) for lay in range(model.n_layers) for h in range(model.n_heads)}
    key = "decoder.ablate"
    st.session_state[key] = [n for n in st.session_state.get(key, []) if n in names]  # another model's heads go
    picked = st.multiselect(
        t("decoder.ablate"), list(names), key=key, help=t("decoder.ablate_help"), placeholder=t("decoder.ablate_none")
    )
    return tuple(names[n] for n in picked)


def ablated_now() -> tuple[tuple[int, int], ...]:
    """The ticked heads as (layer, head) pairs, read from the session (for a callback that runs before the widget)."""
    return tuple(tuple(int(x) - 1 for x in n.split(".")) for n in st.session_state.get("decoder.ablate", []))


def prediction_table(preds: list[Prediction]) -> None:
    """Every position's guesses, folded until opened (`fold.section`): a table of nine columns is a data grid, whose
    scripts, sent above the attention grid, cost a phone's first visit more than a chart (issue 61)."""
    with fold.section(DECODER, "table", t("decoder.table_title", n=len(preds)), icon=":material/table:") as drawn:
        if drawn:
            guesses(preds)


def guesses(preds: list[Prediction]) -> None:
    """Every position: the symbol, what follows, the three best guesses with their probabilities, right or wrong."""
    marks = {True: "✓", False: "✗", None: ""}
    rows = [
        {
            t("decoder.col_pos"): p.position,
            t("decoder.col_symbol"): p.symbol,
            t("decoder.col_next"): p.actual or "",
            **{t("decoder.col_guess", k=k + 1): f"{s} {q:.2f}" for k, (s, q) in enumerate(p.top)},
            t("decoder.col_right"): marks[p.right],
            t("decoder.col_kind"): "" if p.actual is None else t("decoder.repeat" if p.repeat else "decoder.first"),
            t("decoder.col_loss"): "" if p.loss is None else f"{p.loss:.3f}",
        }
        for p in preds
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=min(36 * len(rows) + 38, 420))


def losses(preds: list[Prediction]) -> None:
    """Loss on first occurrences against loss on repeats, and the share of repeats guessed right."""
    first, repeat = mean_losses(preds)
    acc = accuracy_on_repeats(preds)
    cols = st.columns(3)
    cols[0].metric(t("decoder.loss_first"), "—" if first is None else f"{first:.3f}")
    cols[1].metric(t("decoder.loss_repeat"), "—" if repeat is None else f"{repeat:.3f}")
    cols[2].metric(t("decoder.acc_repeat"), "—" if acc is None else f"{acc:.0%}")


def explanation(run: trained.DecoderRun, symbols: list[str], preds: list[Prediction]) -> None:
    """What the numbers on screen say, in the user's language, with the numbers computed now."""
    found = strongest_induction(np.asarray(run.attentions), run.tokens, symbols)
    if found is None:
        st.caption(t("decoder.explain_no_repeat", symbol=code(symbols[-1], 20)))
    else:
        st.markdown(
            t(
                "decoder.explain_induction" if found.weight >= INDUCTION_CLEAR else "decoder.explain_weak",
                head=head_name(found.layer, found.head),
                weight=f"{found.weight:.2f}",
                symbol=code(found.symbol, 20),
                follower=", ".join(code(f, 20) for f in found.followers),
                n=found.places,
            )
        )
    first, repeat = mean_losses(preds)
    if first is not None and repeat is not None:
        st.markdown(
            t("decoder.explain_losses", first=f"{first:.2f}", repeat=f"{repeat:.2f}", ratio=f"{np.exp(-repeat):.2f}")
        )


def attention_grid(run: trained.DecoderRun, n_heads: int) -> None:
    """Every head's causal weights, one row of maps per layer."""
    tokens = list(run.tokens)
    for layer, maps in enumerate(np.asarray(run.attentions)):  # maps: (H, T, T)
        titles = [t("decoder.head_title", name=head_name(layer, h)) for h in range(n_heads)]
        fig = layer_heads_figure(maps, titles, tokens, t("stages.query"), t("stages.key"))
        st.markdown(f"**{t('decoder.layer', n=layer + 1)}**")
        chart(fig, f"decoder.grid.{layer}")


def head_stages(model: trained.Decoder, run: trained.DecoderRun) -> None:
    """One head through the Playground's stage table: X (the stream entering its layer) to W_O, causal mask on."""
    names = [head_name(lay, h) for lay in range(model.n_layers) for h in range(model.n_heads)]
    picked = st.selectbox(t("decoder.open_head"), names, key="decoder.open", index=len(names) - 1)
    layer, head = (int(x) - 1 for x in picked.split("."))
    steps = model.layer_steps(run, layer)  # (T, D) projections, (H, T, T) weights
    tokens = list(run.tokens)
    view = StageView(tokens, steps.x_q, steps, (head,), True, layer=layer)
    first = layer == 0
    st.markdown(f"#### 1. {t('stages.x')}")
    latex.show(
        r"X = E_{\mathrm{symbol}} + E_{\mathrm{position}}" if first else rf"X = X^{{({layer})}} + O^{{({layer})}}"
    )
    note = t("decoder.x_note_first") if first else t("decoder.x_note", before=layer)
    st.caption(f"{shape_text('X', ('T', 'd_model'), tuple(steps.x_q.shape))} · {note}")
    chart(matrix_figure(steps.x_q.numpy(), tokens, dim_labels(steps.x_q.size(-1))), "decoder.st.x")
    for spec in STAGES.values():
        if spec.name != "x":  # drawn above: the stream entering the layer
            draw(spec, view, f"decoder.st.{spec.name}")


def training(model_name: str, step: int) -> None:
    """The training section, folded until opened (`fold.section`): its slider and two charts, sent with the page, made
    a phone's visit wait 2.1x the one-chart floor in Chinese (issue 61). Its title says the checkpoint on screen."""
    model = decoder(model_name)
    title = t("decoder.training_title", step=step, last=model.steps[-1])
    with fold.section(DECODER, "training", title, icon=":material/show_chart:") as drawn:
        if drawn:
            curves(model, step)


def curves(model: trained.Decoder, step: int) -> None:
    """A checkpoint slider, the two losses over training and every head's scores, the checkpoint on screen marked."""
    st.select_slider(t("decoder.step"), options=list(model.steps), key=DECODER.key("step"), help=t("decoder.step_help"))
    log = training_log(model)
    steps = [row["step"] for row in log]
    losses_series = [
        (t("decoder.loss_first"), [row["loss_first"] for row in log]),
        (t("decoder.loss_repeat"), [row["loss_repeat"] for row in log]),
    ]
    chart(
        curves_figure(steps, losses_series, step, t("decoder.curves_loss"), t("decoder.step"), t("decoder.nats")),
        "decoder.curve.loss",
    )
    kind = segmented_score()
    series = [
        (t("decoder.head_title", name=head_name(lay, h)), [row["heads"][kind][lay][h] for row in log])
        for lay in range(model.n_layers)
        for h in range(model.n_heads)
    ]
    title = t("decoder.curves_score", score=t(f"decoder.score_{kind}"))
    chart(
        curves_figure(steps, series, step, title, t("decoder.step"), t("decoder.score"), (0, 1)), "decoder.curve.score"
    )


def segmented_score() -> str:
    """Which of the three head scores the curves show."""
    key = "decoder.score"
    st.session_state.setdefault(key, "induction")
    labels = {k: t(f"decoder.score_{k}") for k in SCORES}
    return st.segmented_control(t("decoder.score_pick"), SCORES, format_func=labels.get, key=key) or "induction"


def training_log(model: trained.Decoder) -> list[dict]:
    """Per checkpoint: step, the two losses and every head's scores (the run's log.json)."""
    return list(model.log["checkpoints"])


def draw_random(vocab: tuple[str, ...]) -> None:
    """Replace the sequence by a seeded random repeating one (a button's callback, before the text box is drawn)."""
    s = st.session_state
    symbols = random_repeating(vocab, s["decoder.period"], s["decoder.length"], s["decoder.seed"])
    DECODER["seq"] = " ".join(symbols)


def continue_greedily(step: int) -> None:
    """Extend the sequence by N symbols, one cached model step at a time, each the model's best guess (a callback)."""
    ablate = ablated_now()
    model = decoder(DECODER["model"], step)
    symbols = parse_symbols(DECODER["seq"])
    n = min(st.session_state["decoder.more"], model.max_len - len(symbols))
    added = []
    if model.problem(symbols) is None and n > 0:
        steps = trained.generate(model, symbols, n, ablate)  # one new query row per step, through the K/V cache
        added = [(s.symbol, float(s.probs.max())) for s in steps]
        symbols += [symbol for symbol, _ in added]
    DECODER["seq"] = " ".join(symbols)
    st.session_state["decoder.added"] = added


def input_controls(vocab: tuple[str, ...], step: int, cap: int) -> None:
    """The random draw (period, length, seed) and the greedy continuation."""
    cols = st.columns(4)
    cols[0].number_input(t("decoder.period"), 2, 16, 6, key="decoder.period")
    cols[1].number_input(t("decoder.length"), 2, cap, 24, key="decoder.length")
    cols[2].number_input(t("common.seed"), 0, 2**31 - 1, 0, key="decoder.seed")
    cols[3].button(t("decoder.draw"), on_click=draw_random, args=(vocab,), icon=":material/casino:")
    cols = st.columns([1, 1, 2])
    cols[0].number_input(t("decoder.more"), 1, cap, 8, key="decoder.more")
    cols[1].button(t("decoder.continue"), on_click=continue_greedily, args=(step,), icon=":material/fast_forward:")
    added = st.session_state.pop("decoder.added", None)
    if added:
        steps = " → ".join(f"{code(s, 20)} ({p:.2f})" for s, p in added)
        cols[2].markdown(t("decoder.added", n=len(added), steps=steps))
