"""attnlab.lmlab, the Language model page's numbers, against attnlab.lm itself and references computed here.

A small random model on a character vocabulary (grouped heads, θ = 500, weights large enough that heads attend
sharply) stands in for the shipped runs: every check compares two computations in the same run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.limits import RTOL_FLOAT32, TOL_LM_LOGITS
from attnlab.lm import UNK, Cache, LanguageModel, extend
from attnlab.lm.model import Llama
from attnlab.lmlab import finder, history, reading, stages, streaming, texts
from tests.near import assert_near
from tests.unit.test_lm import tiny_model

CHARS = list("abcdefghijklmnopqrstuvwxyz .,\n") + list("寥落古行宫，花寂寞红。白头女在闲坐说玄宗")


def tiny(seed: int = 0, **changes) -> LanguageModel:
    """A random two-layer model, 4 query heads reading 2 key/value heads, 40 positions."""
    return tiny_model(seed, chars=CHARS, name="tiny", **{"max_position_embeddings": 40, **changes})


@pytest.fixture(scope="module")
def lm() -> LanguageModel:
    return tiny()


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_extend_goes_on_exactly_where_generate_would_have(lm, temperature):
    whole = lm.generate("the cat", 6, temperature, seed=5)
    start = lm.generate("the cat", 2, temperature, seed=5)
    cached = [s.probs.copy() for s in start.steps]
    went_on = extend(lm, extend(lm, start, 3, temperature), 1, temperature)
    assert went_on.text == whole.text
    for a, b in zip(went_on.steps, whole.steps, strict=True):
        assert a.token_id == b.token_id and np.array_equal(a.probs, b.probs) and np.array_equal(a.weights, b.weights)
    assert len(start.steps) == 2 and all(np.array_equal(a.probs, b) for a, b in zip(start.steps, cached, strict=True))
    with pytest.raises(ValueError):
        extend(lm, start, 40, temperature)  # past the model's 40 positions


def test_a_reading_holds_the_forward_passes_losses_guesses_and_weights(lm):
    text = "the cat sat, the cat sat\n宫花"
    got = reading.read(lm, text)
    out = lm.forward(torch.tensor([lm.encode(text)]))
    logp = torch.log_softmax(out.logits[0].double(), -1)
    ids = lm.encode(text)
    want = [-float(logp[i, ids[i + 1]]) for i in range(len(ids) - 1)]
    # the same pass's float32 logits through the same float64 log-softmax: equal but for float64 rounding
    np.testing.assert_allclose(got.losses, want, rtol=0, atol=1e-12)
    assert list(got.guesses) == [lm.token(int(i)) for i in logp[:-1].argmax(-1)]
    torch.testing.assert_close(got.attentions, torch.stack([w[0] for w in out.attentions]), rtol=0, atol=0)  # one pass
    assert got.pieces == ("<bos>", *text) and got.labels[4] == "␣" and got.labels[-3] == "↵"
    assert got.source().causal and got.source().attentions.shape == (2, 4, len(ids), len(ids))


def test_unknown_characters_are_kept_as_typed_and_a_long_text_keeps_its_start(lm):
    got = reading.read(lm, "ab😀c")
    assert got.unknown == ("😀",) and got.tokens[3] == UNK and got.pieces[3] == "😀"
    long = reading.read(lm, "abc" * 30)
    assert long.n_tokens == lm.max_len and long.cut == 90 - (lm.max_len - 1) and long.pieces[1:4] == tuple("abc")
    with pytest.raises(ValueError):
        reading.read(lm, "")


@pytest.mark.parametrize("temperature", [0.0, 0.5, 2.0])
def test_the_top_ten_at_any_position_are_lm_predicts_on_the_text_up_to_there(lm, temperature):
    text = "the cat sat on"
    ids = tuple(lm.encode(text))
    for position in (0, 5, len(ids) - 1):
        top = reading.top_at(lm, ids, position, 10, temperature)
        prefix = lm.decode(ids[1 : position + 1])
        want = lm.predict(prefix, 10) if prefix else None
        if want is not None:
            assert list(top.tokens) == want.tokens
            np.testing.assert_allclose(top.probs, want.probs, rtol=0, atol=1e-12)  # the same pass, probabilities
        logits = lm.forward(torch.tensor([list(ids[: position + 1])])).logits[0, -1].double()
        logits[lm.vocab.banned()] = float("-inf")  # what generation draws from: never <bos> or <unk>
        tempered = torch.softmax(logits / (temperature or 1.0), -1)
        picked = [lm.vocab.index[t] for t in top.tokens]
        np.testing.assert_allclose(top.tempered, tempered[picked].numpy(), rtol=0, atol=1e-12)  # as above


def test_copies_split_a_text_written_twice(lm):
    twice = reading.read(lm, "the cat.the cat.")
    first, second = reading.copies(twice)
    assert first == pytest.approx(float(np.mean(twice.losses[:8]))) and second == pytest.approx(
        float(np.mean(twice.losses[8:]))
    )
    assert reading.copies(reading.read(lm, "the cat.the dog.")) is None


@pytest.mark.parametrize("changes", [{}, {"qkv_bias": True, "model_type": "qwen2"}, {"num_key_value_heads": 1}])
def test_a_layers_stages_are_the_models_own_pass(changes):
    lm = tiny(3, **changes)
    ids = tuple(lm.encode("寥落古行宫，宫花寂寞红。"))
    out = lm.forward(torch.tensor([list(ids)]), keep_steps=True)
    inputs = stages.layer_inputs(lm, ids)
    for layer in range(lm.n_layers):
        steps = stages.layer_steps(lm, ids, layer, inputs[layer])
        ref = out.steps[layer]
        for name in ("q", "k", "v", "scores", "weights", "output"):  # scores reach 5 to 10: float32's pair
            assert_near(getattr(steps.heads, name), getattr(ref, name)[0], msg=name)
        assert steps.rope == "half" and steps.n_kv_heads == lm.n_kv_heads
        total = sum(stages.contribution(steps, lm, layer, h) for h in range(lm.n_heads))
        b_o = lm.model.model.layers[layer].self_attn.o_proj.bias
        assert_near(total + (0 if b_o is None else b_o), steps.output)


def one_at_a_time(lm, ids, window, sinks) -> np.ndarray:
    """The losses with one token per pass: every query alone against what the cache holds."""
    cache = Cache(window, sinks)
    out = []
    for i in range(len(ids) - 1):
        with torch.no_grad():
            logits = lm.model(torch.tensor([[ids[i]]]), None, cache)[0]
        out.append(-float(torch.log_softmax(logits[0, -1].double(), -1)[ids[i + 1]]))
    return np.array(out)


@pytest.mark.parametrize(("window", "sinks"), [(None, 0), (7, 0), (7, 3)])
def test_the_streamed_losses_past_the_models_length_are_those_of_one_token_at_a_time(lm, window, sinks):
    ids = tuple(lm.encode("the cat sat on the mat, and the dog sat too.\n" * 2))  # 91 tokens, past 40
    got = streaming.stream(lm, ids, window, sinks)
    # float32 sums in another order through two layers of sharp random weights: a loss moves as its logits do
    assert_near(got.losses, one_at_a_time(lm, ids, window, sinks), (TOL_LM_LOGITS, RTOL_FLOAT32))
    assert got.kept.sum() == (len(ids) if window is None else window + sinks)
    np.testing.assert_allclose(got.last_weights.sum(-1), 1.0, atol=1e-5)
    assert not got.last_weights[..., ~got.kept].any()
    if window is None:
        logits = lm.forward(torch.tensor([list(ids[:40])])).logits[0].double()
        want = -torch.log_softmax(logits, -1)[:-1].gather(-1, torch.tensor(ids[1:40])[:, None])[:, 0]
        assert_near(got.losses[:39], want.numpy(), (TOL_LM_LOGITS, RTOL_FLOAT32))


def test_running_mean():
    np.testing.assert_allclose(streaming.running_mean(np.array([1.0, 3.0, 5.0, 7.0]), 2), [1, 2, 4, 6])


def test_head_scores_read_what_they_say_from_made_up_weights():
    tokens = ("<bos>", *"寥落古行宫，宫花寂寞红。寥落")  # two clauses of 5 + a mark: period 6; then a repeat
    t = len(tokens)
    sink = torch.zeros(t, t)
    sink[:, 0] = 1.0
    previous = torch.eye(t).roll(-1, 1).tril()
    previous[0, 0] = 1.0
    line = torch.zeros(t, t)
    for i in range(t):
        line[i, i - 6 if i >= 7 else 0] = 1.0
    a = torch.stack([sink, previous, line])[None]  # (1, 3, T, T)
    got = finder.head_scores(a, tokens)
    torch.testing.assert_close(got["sink"][0], torch.tensor([1.0, 1 / (t - 1), 6 / (t - 1)], dtype=torch.float64))
    assert got["previous"][0, 1] == 1.0 and got["line"][0, 2] == 1.0 and got["line"][0, 1] == 0.0
    assert finder.line_period(tokens) == 6 and finder.line_period(("<bos>", *"the cat, the mat.")) is None
    assert finder.continuations(tokens) == [(14, [3])]  # 寥落 again: the query on 落 looks at 古, after the first 落
    assert got["induction"][0].tolist() == [0.0, 0.0, 0.0]
    assert finder.head_scores(a[..., :5, :5], tokens[:5])["induction"] is None


def test_along_training_and_where_copying_appears(lm):
    probe = history.probe_of("the cat sat")
    got = history.along_training(lambda step: tiny(step), [1, 2], probe)
    assert [c.step for c in got] == [1, 2] and got[0].scores["sink"].shape == (2, 4)
    assert np.isnan(got[0].scores["line"]).all() and not np.isnan(got[0].scores["induction"]).any()
    assert got[1].copy_first == pytest.approx(reading.copies(reading.read(tiny(2), probe))[0])
    records = [{"step": s, "copy_loss_first": 5.0, "copy_loss_second": 5.0 - g} for s, g in [(1, 0), (2, 0.3), (4, 1)]]
    assert history.copying_from(records) == 4 and history.copying_from(records[:2]) == 2
    assert history.copying_from([{"step": 1, "copy_loss_first": 1.0, "copy_loss_second": 2.0}]) is None


def test_the_held_out_passages_are_long_enough_and_the_first_poem_has_lines():
    for lang in ("zh", "en"):
        assert len(texts.held_out(lang)) == texts.HELD_OUT_CHARS >= 512
    assert finder.line_period(("<bos>", *texts.first_text("zh"))) == 6


@pytest.mark.parametrize("changes", [{}, {"qkv_bias": True, "tie_word_embeddings": False}])
def test_the_loaders_shapes_come_from_a_meta_model_that_is_never_initialised(changes):
    from attnlab.lm.checkpoint import ShapesOnly, expected

    cfg = tiny(0, **changes).cfg
    assert expected(cfg) == {k: tuple(v.shape) for k, v in Llama(cfg).state_dict().items()}
    with ShapesOnly():
        x = torch.full((3,), 2.0).normal_()
    assert x.tolist() == [2.0, 2.0, 2.0] and torch.empty(3).fill_(5.0).tolist() == [5.0] * 3  # only inside the mode
