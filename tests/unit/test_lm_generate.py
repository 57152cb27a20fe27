"""Generation with the cache: every step equals a full forward under the same mask, here and in transformers.

The full forward of reference is transformers' LlamaForCausalLM on the whole sequence so far, given as an additive
4-D mask the rule the cache keeps (causal; with a window, the last `window` tokens and the first `sinks`). Each
step's distribution must be that forward's last row (with <bos> and <unk> set to 0 and the rest renormalised), and
its weights that row's weights at the positions the cache holds, and 0 elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.limits import MAX_LM_GENERATE, RTOL_FLOAT32, TOL_FLOAT32
from attnlab.lm.cache import allowed
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near
from tests.unit.test_lm import tiny_model

PROMPT = "the moon, bright"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The tiny model and transformers' LlamaForCausalLM reading the folder it saved."""
    from transformers import LlamaForCausalLM

    lm = tiny_model(seed=3)
    folder = tmp_path_factory.mktemp("gen")
    lm.save_pretrained(folder)
    return lm, LlamaForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()


def reference(ref, ids: list[int], window, sinks):
    """transformers' last-row distribution and every layer's last-row weights under the cache's rule."""
    pos = torch.arange(len(ids))
    ok = allowed(pos, pos, window, sinks, None)
    mask = torch.zeros(1, 1, len(ids), len(ids)).masked_fill(~ok, float("-inf"))
    with torch.no_grad():
        out = ref(torch.tensor([ids]), attention_mask=mask, output_attentions=True)
    logits = out.logits[0, -1].double()
    logits[[0, 1]] = float("-inf")  # <bos> and <unk> are never drawn
    return torch.softmax(logits, -1).numpy(), torch.stack([a[0, :, -1] for a in out.attentions]).numpy()


@REFERENCE_GROUP
@pytest.mark.parametrize(("window", "sinks"), [(None, 0), (6, 0), (6, 2), (1, 1)])
def test_each_cached_step_equals_the_full_forward_under_the_same_mask(pair, window, sinks):
    lm, ref = pair
    gen = lm.generate(PROMPT, 10, window=window, sinks=sinks)
    ids = lm.encode(PROMPT)
    for step in gen.steps:
        probs, weights = reference(ref, ids, window, sinks)  # ids end with the token this step fed
        # float64 arrays of what float32 logits gave: float32's pair
        assert_near(step.probs, probs, (TOL_FLOAT32, RTOL_FLOAT32))
        assert step.weights.shape == (2, 4, len(step.positions))
        assert_near(step.weights, weights[..., step.positions], (TOL_FLOAT32, RTOL_FLOAT32))
        dropped = np.setdiff1d(np.arange(len(ids)), step.positions)
        assert np.all(weights[..., dropped] == 0)
        expect = (
            np.arange(len(ids))
            if window is None
            else [p for p in range(len(ids)) if p < sinks or p > len(ids) - 1 - window]
        )
        assert step.positions.tolist() == list(expect)
        ids = [*ids, step.token_id]
    assert gen.text == lm.decode(ids[len(lm.encode(PROMPT)) :])


def test_greedy_is_deterministic_and_sampling_follows_its_seed():
    lm = tiny_model(seed=3)
    a, b = lm.generate(PROMPT, 12), lm.generate(PROMPT, 12)
    assert a.text == b.text and len(a.text) == 12
    assert all(s.token_id == int(np.argmax(s.probs)) for s in a.steps)
    s1, s2 = lm.generate(PROMPT, 12, temperature=1.5, seed=7), lm.generate(PROMPT, 12, temperature=1.5, seed=7)
    assert s1.text == s2.text
    assert len({lm.generate(PROMPT, 12, temperature=1.5, seed=s).text for s in range(4)}) > 1
    assert all(s.probs[[0, 1]].sum() == 0 and s.token_id > 1 for s in s1.steps)


def test_a_long_prompt_is_cut_to_leave_room_and_the_cut_is_reported():
    lm = tiny_model()
    gen = lm.generate("ab" * 40 + "€", 8)
    assert gen.prompt.cut == 81 - (48 - 8 - 1) and len(gen.prompt.ids) + 8 == 48
    assert gen.prompt.unknown == ["€"] and gen.prompt.text.endswith("€") and len(gen.steps) == 8


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": -1}, "n must be a whole number"),
        ({"n": MAX_LM_GENERATE + 1}, "n must be a whole number"),
        ({"n": 2, "temperature": float("nan")}, "temperature must be a finite number"),
        ({"n": 2, "temperature": -1.0}, "temperature must be a finite number"),
        ({"n": 2, "window": 0}, "window must be a whole number of at least 1"),
        ({"n": 2, "window": 4, "sinks": -1}, "sinks must be a whole number of 0 or more"),
        ({"n": 2, "seed": 1.5}, "seed must be a whole number"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny_model().generate(PROMPT, **kwargs)
