"""Temperature, top-k and top-p (contract 19): the kept support against a brute-force reference and transformers'
own logits warpers, the renormalised distribution, the greedy choice beside the drawn one, branching in one batch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32
from attnlab.lm import extend
from attnlab.lm.sampling import kept, sampler
from tests.conftest import REFERENCE_GROUP
from tests.examples import examples
from tests.near import assert_near
from tests.unit.test_lm import tiny_model

PROMPT = "the moon, bright"
EDGE = 1e-9  # a prefix whose share lies this close to p is decided by rounding: no reference can hold it


def brute_force(probs: list[float], top_k: int | None, top_p: float | None) -> set[int]:
    """Every token of positive probability, likeliest first (lower id on a tie), cut to k, then the shortest prefix
    whose share of what is left reaches p: the contract's words, one candidate set at a time."""
    order = sorted((i for i, p in enumerate(probs) if p > 0), key=lambda i: (-probs[i], i))
    if top_k is not None:
        order = order[:top_k]
    if top_p is None or top_p >= 1:
        return set(order)
    total = math.fsum(probs[i] for i in order)
    for n in range(1, len(order) + 1):
        if math.fsum(probs[i] for i in order[:n]) / total >= top_p:
            return set(order[:n])
    return set(order)


def near_edge(probs: list[float], top_k: int | None, top_p: float | None) -> bool:
    """Some prefix's share lies within EDGE of p (after the top-k cut)."""
    if top_p is None:
        return False
    order = sorted((i for i, p in enumerate(probs) if p > 0), key=lambda i: (-probs[i], i))[:top_k]
    total = math.fsum(probs[i] for i in order)
    return any(abs(math.fsum(probs[i] for i in order[:n]) / total - top_p) < EDGE for n in range(1, len(order) + 1))


weights = st.lists(  # few distinct values, so ties and zeros are common
    st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5]), st.floats(0.0, 10.0)), min_size=1, max_size=40
).filter(lambda w: sum(w) > 0)
cut_k = st.one_of(st.none(), st.integers(1, 45))
cut_p = st.one_of(st.none(), st.floats(0.001, 1.0), st.sampled_from([0.5, 0.9, 1.0]))


@given(weights, cut_k, cut_p)
@settings(max_examples=examples(400), deadline=None)
def test_top_k_and_top_p_keep_exactly_the_contracts_support(w, top_k, top_p):
    probs = torch.tensor(w, dtype=torch.float64)
    probs = probs / probs.sum()
    as_list = probs.tolist()
    assume(not near_edge(as_list, top_k, top_p))
    got = set(torch.nonzero(kept(probs, top_k, top_p)).flatten().tolist())
    assert got == brute_force(as_list, top_k, top_p)


@given(st.lists(st.floats(-8.0, 8.0), min_size=2, max_size=30), st.floats(0.2, 2.0), cut_k, cut_p)
@settings(max_examples=examples(200), deadline=None)
def test_the_sampler_renormalises_what_it_keeps_as_transformers_warpers_do(logits, temperature, top_k, top_p):
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    z = torch.tensor(logits, dtype=torch.float64)
    tempered = torch.softmax(z / temperature, -1)
    cut = tempered[kept(tempered, top_k, None)].tolist() if top_k else tempered.tolist()
    assume(not near_edge(sorted(cut, reverse=True), None, top_p))
    assume(len(set(tempered.tolist())) == len(logits))  # transformers' sort breaks ties its own way
    probs, keep = sampler(z, temperature, top_k, top_p)
    scores = TemperatureLogitsWarper(temperature)(None, z[None].clone())
    if top_k is not None:
        scores = TopKLogitsWarper(top_k)(None, scores)
    if top_p is not None:
        scores = TopPLogitsWarper(top_p)(None, scores)
    theirs = torch.softmax(scores[0], -1)
    assert torch.equal(keep, torch.isfinite(scores[0]))
    assert_near(probs, theirs)  # both float64 from the same logits
    assert math.isclose(float(probs.sum()), 1.0, abs_tol=1e-12) and bool((probs[~keep] == 0).all())


@pytest.mark.parametrize("top_k", [0, -1, 1.5, True, "3"])
def test_a_top_k_below_one_or_not_whole_is_refused_by_name(top_k):
    lm = tiny_model()
    with pytest.raises(ValueError, match="top_k"):
        lm.predict(PROMPT, top_k=top_k)
    with pytest.raises(ValueError, match="top_k"):
        lm.generate(PROMPT, 2, 0.5, top_k=top_k)


@pytest.mark.parametrize("top_p", [0, -0.1, 1.01, float("nan"), float("inf"), True])
def test_a_top_p_outside_zero_to_one_is_refused_by_name(top_p):
    lm = tiny_model()
    with pytest.raises(ValueError, match="top_p"):
        lm.predict(PROMPT, top_p=top_p)
    with pytest.raises(ValueError, match="top_p"):
        lm.branches(PROMPT, 2, [0.5], top_p=top_p)


@pytest.mark.parametrize(("temperature", "top_k", "top_p"), [(0.0, None, None), (0.9, 3, None), (1.4, None, 0.8)])
def test_each_step_draws_from_its_cut_distribution_with_the_greedy_choice_beside(temperature, top_k, top_p):
    lm = tiny_model(seed=4)
    made = lm.generate(PROMPT, 12, temperature, seed=2, top_k=top_k, top_p=top_p)
    ids = lm.encode(PROMPT)
    for step in made.steps:
        logits = lm.forward(torch.tensor([ids])).logits[0, -1].double()
        logits[lm.vocab.banned()] = float("-inf")
        model = torch.softmax(logits, -1)
        assert step.argmax == int(model.argmax())  # the greedy choice: the model's likeliest
        want, _ = sampler(logits, temperature, top_k, top_p)
        assert_near(step.probs, want.numpy(), (TOL_FLOAT32, RTOL_FLOAT32))  # the cached step's float32 logits
        assert step.probs[step.token_id] > 0 and math.isclose(step.probs.sum(), 1.0, abs_tol=1e-9)
        if top_k is not None:
            assert (step.probs > 0).sum() <= top_k
        if temperature == 0:
            assert step.token_id == step.argmax
        ids = [*ids, step.token_id]
    assert made.text == lm.decode(ids[len(lm.encode(PROMPT)) :])


def test_top_k_of_one_is_greedy_at_any_temperature():
    lm = tiny_model(seed=1)
    greedy = lm.generate(PROMPT, 10).text
    assert all(lm.generate(PROMPT, 10, t, seed=s, top_k=1).text == greedy for t, s in [(0.7, 0), (2.0, 9)])
    assert lm.generate(PROMPT, 10, 1.5, seed=3, top_p=1e-9).text == greedy  # the likeliest alone reaches any tiny p


def test_predict_lists_only_what_the_cuts_keep_renormalised():
    lm = tiny_model(seed=2)
    whole = lm.predict(PROMPT, 50, 0.8)
    cut = lm.predict(PROMPT, 50, 0.8, top_k=4)
    assert cut.kept == 4 and len(cut.tokens) == 4 and cut.tokens == whole.tokens[:4]
    assert_near(np.array(cut.probs), np.array(whole.probs[:4]) / sum(whole.probs[:4]))  # float64, one pass
    nucleus = lm.predict(PROMPT, 50, 0.8, top_p=0.5)
    shares = np.cumsum(whole.probs)
    assert nucleus.kept == int(np.searchsorted(shares, 0.5) + 1) and math.isclose(sum(nucleus.probs), 1.0)
    assert lm.predict(PROMPT, 5, 0.0).probs == lm.predict(PROMPT, 5, 1.0).probs  # 0: the model's own, greedy's view


@REFERENCE_GROUP
def test_three_branches_in_one_batch_are_the_three_generations():
    lm = tiny_model(seed=5)
    rows = lm.branches(PROMPT, 14, [0.0, 0.8, 1.6], seed=11, top_k=12, top_p=0.95)
    for row, temperature in zip(rows, [0.0, 0.8, 1.6], strict=True):
        alone = lm.generate(PROMPT, 14, temperature, seed=11, top_k=12, top_p=0.95)
        assert row.text == alone.text
        for a, b in zip(row.steps, alone.steps, strict=True):
            assert a.argmax == b.argmax and np.array_equal(a.positions, b.positions)
            assert_near(a.probs, b.probs, (TOL_FLOAT32, RTOL_FLOAT32))  # a batch of three against one row
            assert_near(a.weights, b.weights)
    went_on = extend(lm, rows[1], 3, 0.8, 12, 0.95)  # a branch goes on as a generation does
    assert went_on.text == lm.generate(PROMPT, 17, 0.8, seed=11, top_k=12, top_p=0.95).text
    with pytest.raises(ValueError, match="temperatures"):
        lm.branches(PROMPT, 2, [])
