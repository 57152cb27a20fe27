"""The Trained decoder page: both languages, its numbers equal the model's, bad input said and typed text kept."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from attnlab import trained
from attnlab.limits import INDUCTION_CLEAR
from attnlab.ui.app import fold
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.decoder import sections as dec
from attnlab.ui.pages.decoder import yours
from attnlab.ui.pages.decoder.live import RUNNER
from attnlab.ui.pages.decoder.numbers import mean_losses, predictions, strongest_induction
from tests.app.charts import blocked_cells, heatmap_values
from tests.app.conftest import assert_clean, metric, one_session_per_run, open_page, texts
from tests.conftest import LIVE_GROUP, LIVE_SEED, LIVE_STEPS

PAGE = "views/decoder.py"
SEQ = "k 3 x m q 7 k 3 x m q 7 k 3 x"


runner_forgotten = one_session_per_run(RUNNER)


def expected_losses(model: str, seq: str, ablate=()) -> tuple[float, float]:
    """The two losses straight from the core, for the last checkpoint."""
    decoder = trained.load(dec.MODELS[model])
    symbols = seq.split()
    run = decoder.run(symbols, ablate=ablate)
    return mean_losses(predictions(np.asarray(run.probs), run.tokens, symbols, decoder.vocab))


@pytest.mark.parametrize("model", list(dec.MODELS))
def test_the_page_draws_every_layer_and_builds_its_folded_sections_only_when_opened(model, lang):
    at = open_page(PAGE, lang=lang, model=model, seq=SEQ)
    assert_clean(at)
    n_layers = trained.load(dec.MODELS[model]).n_layers
    assert len(at.get("plotly_chart")) == n_layers  # the curves, your own run and the stages are built when opened
    assert not at.get("select_slider") and not [b for b in at.button if b.label == catalog(lang)["decoder.live_start"]]
    assert not texts(at, "warning") and not texts(at, "error")
    first, repeat = expected_losses(model, SEQ)
    assert metric(at, lang, "decoder.loss_first") == f"{first:.3f}"
    assert metric(at, lang, "decoder.loss_repeat") == f"{repeat:.3f}"


def test_the_training_section_opens_with_its_slider_and_curves_and_its_title_says_the_checkpoint(lang):
    decoder = trained.load("induction-2l")
    at = open_page(PAGE, lang=lang, model="2l", seq=SEQ)
    title = catalog(lang)["decoder.training_title"].format(step=decoder.steps[-1], last=decoder.steps[-1])
    assert title in [e.label for e in at.expander]
    at.session_state[fold.key(dec.DECODER, "training")] = True
    at.run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 2 + 2  # the layers' grids, then the losses and the heads' scores
    assert at.select_slider(key="decoder.step").value == decoder.steps[-1]
    assert at.query_params["open"] in ("training", ["training"])  # a shared link opens it too


@pytest.mark.parametrize(("layer", "head"), [(0, 2), (1, 0)])
def test_an_opened_head_runs_through_the_playgrounds_eleven_stages_with_the_decoders_numbers(layer, head, lang):
    from attnlab.ui.parts.stages import STAGES

    at = open_page(PAGE, lang=lang, model="2l", seq=SEQ)
    at.session_state["decoder.stages_open"] = True
    at.run().selectbox(key="decoder.open").set_value(dec.head_name(layer, head)).run()
    assert_clean(at)
    charts = at.get("plotly_chart")
    assert len(charts) == 2 + len(STAGES)
    decoder = trained.load("induction-2l")
    run = decoder.run(SEQ.split())
    softmax = 2 + list(STAGES).index("weights")
    assert np.allclose(heatmap_values(at, softmax)[0], run.attentions[layer, head], atol=1e-6)
    n = len(run.tokens)
    assert (blocked_cells(at, softmax - 1)[0] == np.triu(np.ones((n, n), bool), 1)).all()  # the causal mask
    steps = decoder.layer_steps(run, layer)
    assert np.allclose(heatmap_values(at, 2)[0], steps.x_q.numpy(), atol=1e-6)  # X: the stream entering the layer


def test_the_grid_shows_the_models_own_weights():
    at = open_page(PAGE, model="2l", seq=SEQ)
    run = trained.load("induction-2l").run(SEQ.split())
    for layer in range(run.attentions.shape[0]):
        shown = heatmap_values(at, layer)
        assert np.allclose(np.stack(shown), np.asarray(run.attentions[layer]), atol=1e-6)


def test_ablating_heads_changes_the_losses():
    at = open_page(PAGE, model="2l", seq=SEQ)
    decoder = trained.load("induction-2l")
    names = [dec.head_name(0, h) for h in range(decoder.n_heads)]
    at.multiselect(key="decoder.ablate").set_value(names).run()
    assert_clean(at)
    first, repeat = expected_losses("2l", SEQ, ablate=tuple((0, h) for h in range(decoder.n_heads)))
    assert metric(at, "en", "decoder.loss_repeat") == f"{repeat:.3f}"
    assert metric(at, "en", "decoder.loss_first") == f"{first:.3f}"


def test_continue_appends_the_models_greedy_picks_one_at_a_time():
    at = open_page(PAGE, model="2l", seq=SEQ)
    at.number_input(key="decoder.more").set_value(3)
    at.button[1].click().run()
    assert_clean(at)
    decoder = trained.load("induction-2l")
    symbols = SEQ.split()
    for _ in range(3):
        symbols.append(decoder.vocab[int(np.argmax(decoder.run(symbols).probs[-1]))])
    assert at.text_input(key="decoder.seq").value == " ".join(symbols)
    assert at.query_params["seq"] == [" ".join(symbols)] or at.query_params["seq"] == " ".join(symbols)


def test_a_random_draw_repeats_with_the_chosen_period():
    at = open_page(PAGE, model="2l")
    at.number_input(key="decoder.period").set_value(5)
    at.number_input(key="decoder.length").set_value(17)
    at.button[0].click().run()
    assert_clean(at)
    symbols = at.text_input(key="decoder.seq").value.split()
    assert len(symbols) == 17 and len(set(symbols[:5])) == 5
    assert all(symbols[i] == symbols[i - 5] for i in range(5, 17))


def test_the_slider_scrubs_the_checkpoints():
    decoder = trained.load("induction-2l")
    first = decoder.steps[0]
    at = open_page(PAGE, model="2l", seq=SEQ, open="training")
    at.select_slider(key="decoder.step").set_value(first).run()
    assert_clean(at)
    run = trained.load("induction-2l", first).run(SEQ.split())
    assert np.allclose(np.stack(heatmap_values(at, 0)), np.asarray(run.attentions[0]), atol=1e-6)
    assert at.query_params["step"] in (str(first), [str(first)])


@pytest.mark.parametrize(
    ("seq", "key"),
    [
        ("", "decoder.empty"),
        ("   ", "decoder.empty"),
        ("k 3 ☃ x", "decoder.unknown"),
        ("<img src=x onerror=alert(1)> k", "decoder.unknown"),
        ("[click](http://evil.example) **b** k", "decoder.unknown"),
        ("k " * 500, "decoder.too_long"),
    ],
)
def test_bad_sequences_are_said_in_the_users_language_and_kept(seq, key, lang):
    at = open_page(PAGE, lang=lang, seq=seq)
    assert_clean(at)
    said = " ".join(texts(at, "error") + texts(at, "info"))
    head = catalog(lang)[key].split("{")[0]
    assert head and head in said
    assert at.text_input(key="decoder.seq").value == seq
    for live in ("](http", "<img", "**b**"):
        assert all(live not in part for part in said.split("`")[::2])


@pytest.mark.parametrize(("query", "said"), [({"step": "33"}, "step=33"), ({"model": "<b>"}, "model=<b>")])
def test_bad_link_values_are_replaced_and_said(query, said, lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, **query)
    assert_clean(at)
    assert any(said in w for w in texts(at, "warning"))
    assert int(at.query_params["step"] if isinstance(at.query_params["step"], str) else at.query_params["step"][0]) in (
        trained.load("induction-2l").steps
    )


def test_a_live_run_trains_with_progress_and_a_loss_curve():
    at = open_page(PAGE, model="2l", seq=SEQ, open="yours")
    at.number_input(key="decoder.live_steps").set_value(20)
    start = [b for b in at.button if b.label == catalog("en")["decoder.live_start"]][0]
    start.click().run()
    for _ in range(200):
        if texts(at, "success"):
            break
        threading.Event().wait(0.05)
        at.run()
    assert_clean(at)
    assert catalog("en")["decoder.live_done"].split("{")[0] in " ".join(texts(at, "success"))
    assert len(at.get("plotly_chart")) == 2 + 2  # two layers, the live run's loss and head scores
    not_yet = catalog("en")["livetrain.not_yet"].split("{")[0]
    assert any(not_yet in c for c in texts(at, "caption")), "20 steps: no induction head yet, and the page says so"


@LIVE_GROUP
def test_the_default_live_run_crosses_the_change_and_marks_it(lang, monkeypatch, default_live_runs):
    """The page starts the default live run and marks its change: the steps, not the clock (the budget is lifted,
    tests/unit covers it). The core's trainer is replaced by the very run it reported for the same recipe, steps and
    seed (`default_live_runs`, whose crossing tests/unit checks), so that run is trained once, not twice."""

    def replay(recipe, steps, callback, cancel=None, seed=None):
        assert (recipe, steps, seed) == ("induction-2l", LIVE_STEPS, LIVE_SEED)
        for step, losses in default_live_runs[recipe]:
            if cancel is not None and cancel.is_set():
                break
            callback(step, losses)

    monkeypatch.setattr(yours, "train_live", replay)
    monkeypatch.setattr(RUNNER, "budget_s", 1e9)
    at = open_page(PAGE, lang=lang, model="2l", seq=SEQ, open="yours")
    assert at.number_input(key="decoder.live_steps").value == LIVE_STEPS
    assert at.number_input(key="decoder.live_seed").value == LIVE_SEED
    start = [b for b in at.button if b.label == catalog(lang)["decoder.live_start"]][0]
    start.click().run()
    while RUNNER.snapshot().running:  # wait on the runner itself, as a page polling it would
        threading.Event().wait(0.05)
    at.run()
    assert_clean(at)
    changed = catalog(lang)["livetrain.changed"].split("{")[0]
    assert any(changed in str(m.value) for m in at.markdown), "the change is said with its step"
    for index in (2, 3):  # the live loss and the live head scores, each with the change marked
        shapes = json.loads(at.get("plotly_chart")[index].proto.spec)["layout"]["shapes"]
        assert len(shapes) == 2  # the run's current step and the change


def test_a_second_visitor_is_told_the_server_is_busy(lang):
    gate = threading.Event()

    def slow():
        gate.wait()
        yield 1, 1.0

    assert RUNNER.start("someone else", 10, slow)
    try:
        at = open_page(PAGE, lang=lang, seq=SEQ, open="yours")
        start = [b for b in at.button if b.label == catalog(lang)["decoder.live_start"]][0]
        start.click().run()
        assert_clean(at)
        assert catalog(lang)["decoder.live_busy"].split("{")[0] in " ".join(texts(at, "warning"))
    finally:
        gate.set()  # the run ends; `runner_forgotten` waits for it


def test_the_explanation_states_the_weight_computed_now(lang):
    at = open_page(PAGE, lang=lang, model="2l", seq=SEQ)
    symbols = SEQ.split()
    run = trained.load("induction-2l").run(symbols)
    found = strongest_induction(np.asarray(run.attentions), run.tokens, symbols)
    key = "decoder.explain_induction" if found.weight >= INDUCTION_CLEAR else "decoder.explain_weak"
    said = " ".join(m.value for m in at.markdown)
    assert catalog(lang)[key].split("{")[0] in said
    assert f"{found.weight:.2f}" in said and f"{found.layer + 1}.{found.head + 1}" in said


def test_every_positions_guesses_wait_folded_and_are_the_models_once_opened(lang):
    at = open_page(PAGE, lang=lang, model="2l", seq=SEQ)
    assert not at.dataframe and at.query_params["open"] == ""  # no data grid on the first visit (issue 61)
    assert at.main.expander[0].label == catalog(lang)["decoder.table_title"].format(n=len(SEQ.split()))
    at.session_state["decoder.open.table"] = True
    at.run()
    assert_clean(at)
    decoder, symbols = trained.load("induction-2l"), SEQ.split()
    run = decoder.run(symbols)
    preds = predictions(np.asarray(run.probs), run.tokens, symbols, decoder.vocab)
    table = at.dataframe[0].value
    guess = catalog(lang)["decoder.col_guess"].format(k=1)
    assert list(table[guess]) == [f"{p.top[0][0]} {p.top[0][1]:.2f}" for p in preds]
    assert at.query_params["open"] == "table"
