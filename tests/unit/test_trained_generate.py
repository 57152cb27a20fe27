"""Generation with a key/value cache against the full causal forward on every prefix (contract 12)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.trained import SymbolError, generate, load
from attnlab.trained.generation import step_cost, step_times
from tests.near import assert_near


@pytest.fixture(scope="module", params=["induction-2l", "induction-1l"])
def model(request):
    return load(request.param)


@pytest.mark.parametrize("prompt", ["k 3 x m q 7 k 3", "z", "a b c d a b c d a b c d e f"])
def test_every_step_equals_the_full_forward_on_its_prefix(model, prompt):
    steps = generate(model, prompt, 12)
    symbols = prompt.split()
    assert len(steps) == 12
    for step in steps:
        run = model.run(symbols)
        _, full, _ = model.forward(symbols)
        t = len(symbols) + 1
        assert step.keys.shape == (model.n_layers, model.n_heads, t, 16) == step.values.shape
        assert step.weights.shape == (model.n_layers, model.n_heads, t) and step.probs.shape == (len(model.vocab),)
        assert_near(step.probs, run.probs[-1])
        assert_near(step.weights, run.attentions[:, :, -1])
        assert_near(step.keys, np.stack([s.k[0].numpy() for s in full]))
        assert_near(step.values, np.stack([s.v[0].numpy() for s in full]))
        assert_near(step.query, np.stack([s.q[0, :, -1].numpy() for s in full]))
        assert step.token == symbols[-1] and step.symbol == model.vocab[int(np.argmax(run.probs[-1]))]
        symbols.append(step.symbol)


def test_the_cache_follows_ablation_too():
    two = load("induction-2l")
    steps = generate(two, "k 3 x m k 3", 3, ablate=((1, 0),))
    run = two.run("k 3 x m k 3".split() + [steps[0].symbol, steps[1].symbol], ablate=((1, 0),))
    assert_near(steps[2].probs, run.probs[-1])


def test_the_two_layer_model_continues_the_pattern_and_the_control_does_not():
    prompt = "k 3 x m q 7 k 3 x"
    assert [s.symbol for s in generate(load("induction-2l"), prompt, 6)] == "m q 7 k 3 x".split()
    assert [s.symbol for s in generate(load("induction-1l"), prompt, 6)] != "m q 7 k 3 x".split()


def test_bad_input_raises(model):
    with pytest.raises(SymbolError, match="unknown"):
        generate(model, "a B", 2)
    with pytest.raises(SymbolError, match="cap"):
        generate(model, "a b", model.max_len - 1)
    with pytest.raises(ValueError):
        generate(model, "a b", -1)
    assert generate(model, "a b", 0) == []


def test_the_step_cost_with_the_cache_is_linear_and_without_it_quadratic(model):
    a, b = step_cost(model, 10), step_cost(model, 20)
    assert a.with_cache < a.without_cache and b.saving > a.saving
    attention = 2 * model.n_layers * 64  # q.k and a.v per cached token, every layer
    assert b.with_cache - a.with_cache == 10 * attention
    assert a.cache_floats == 2 * model.n_layers * 10 * 64


def test_step_times_are_measured(model):
    cached, full = step_times(model, "a b c d " * 8, repeats=5)
    assert 0 < cached and 0 < full
