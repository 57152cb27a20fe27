"""The shipped decoders: contract 8's API, causality, the circuit, ablation and bad symbols."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.limits import TRAINED_MAX_SYMBOLS
from attnlab.trained import SymbolError, evaluate, load, run_dir
from attnlab.trained.data import VOCAB, repeating
from tests.near import assert_near


@pytest.fixture(scope="module")
def two():
    return load("induction-2l")


@pytest.fixture(scope="module")
def one():
    return load("induction-1l")


def test_contract_fields(two):
    assert two.n_layers == 2 and two.step == two.steps[-1] and two.steps[0] == 0
    assert two.max_len == TRAINED_MAX_SYMBOLS and not any(s.isspace() or not s for s in two.vocab)
    r = two.run("a b c d a b c")
    t = len(r.tokens)
    assert r.tokens[1:] == list("abcdabc") and t == 8
    assert r.attentions.dtype == np.float32 and r.attentions.shape == (2, two.n_heads, t, t)
    assert r.probs.dtype == np.float32 and r.probs.shape == (t, len(two.vocab))
    assert_near(r.probs.sum(-1), 1)
    assert_near(r.attentions.sum(-1), 1)


def test_a_later_symbol_never_changes_earlier_predictions_or_weights(two):
    a, b = two.run(list("qwer7qwe")), two.run(list("qwer7qwex"))
    t = len(a.tokens)
    np.testing.assert_array_equal(a.probs, b.probs[:t])
    np.testing.assert_array_equal(a.attentions, b.attentions[:, :, :t, :t])
    assert np.all(np.triu(b.attentions, 1) == 0)


def test_forward_equals_plain_torch_sdpa(two):
    m = two.model
    ids = torch.cat([torch.tensor([len(VOCAB)]), two.encode("k3m9zk3m9zk3")])[None]
    x = m.embed[ids] + m.pos[: ids.size(1)]
    h = two.n_heads
    for layer in range(two.n_layers):
        q, k, v = (x @ m.w_qkv[layer]).split(x.size(-1), -1)
        q, k, v = (z.view(1, -1, h, z.size(-1) // h).transpose(1, 2) for z in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + o.transpose(1, 2).reshape(x.shape) @ m.w_o[layer]
    want = torch.softmax(x @ m.unembed, -1)[0]
    assert_near(two.run("k3m9zk3m9zk3").probs, want.detach().numpy())


def test_the_two_layer_model_predicts_repeats_and_the_one_layer_control_does_not(two, one):
    got2, got1 = evaluate(two, n=64), evaluate(one, n=64)
    assert got2["loss_repeat"] <= 0.3 and got2["acc_repeat"] >= 0.95
    assert max(got2["heads"]["induction"][-1]) >= 0.5
    assert got1["loss_repeat"] >= 1.0


def test_zeroing_layer_one_breaks_the_circuit(two):
    base = evaluate(two, n=64)["loss_repeat"]
    broken = evaluate(two, n=64, ablate=[(0, h) for h in range(two.n_heads)])["loss_repeat"]
    assert broken >= base + 1.0


def test_ablate_zeroes_a_heads_output_and_changes_the_predictions(two):
    seq = "abcdefabcdef"
    full, cut = two.run(seq), two.run(seq, ablate=[(1, h) for h in range(two.n_heads)])
    np.testing.assert_array_equal(
        full.attentions, cut.attentions
    )  # the last layer's weights are computed, then dropped
    assert not np.allclose(full.probs, cut.probs)


def test_the_untrained_checkpoint_guesses_uniformly():
    d = load("induction-2l", step=0)
    assert abs(evaluate(d, n=16)["loss_repeat"] - np.log(len(d.vocab))) < 0.2


def test_head_steps_are_the_runs_weights(two):
    r = two.run("xyz12xyz1", ablate=[(0, 1)])
    s = two.head_steps(r, 1, 2)
    assert_near(s.weights.numpy(), r.attentions[1, 2])
    assert s.q.shape == (len(r.tokens), 16) and bool(s.blocked[0, 1])


def test_layer_steps_carry_the_stream_and_the_ablation_from_one_layer_to_the_next(two):
    r = two.run("xyz12xyz1", ablate=[(0, 1)])
    first, second = two.layer_steps(r, 0), two.layer_steps(r, 1)
    for layer, steps in enumerate((first, second)):
        assert_near(steps.heads.weights.numpy(), r.attentions[layer])
    d_k = first.d_k
    assert first.concat[:, d_k : 2 * d_k].abs().max() == 0  # head 1.2 zeroed: it writes nothing
    assert first.concat[:, :d_k].abs().max() > 0
    assert_near(second.x_q, first.x_q + first.output)  # the residual stream between the layers


@pytest.mark.parametrize(
    ("symbols", "named"),
    [
        ("a b ?", "'?'"),
        ("", "empty"),
        ("   ", "empty"),
        (["a"] * (TRAINED_MAX_SYMBOLS + 1), str(TRAINED_MAX_SYMBOLS)),
        (["a", "<b>"], "'<b>'"),
        ("a b 中", "'中'"),
    ],
)
def test_bad_symbols_raise_a_symbol_error_that_names_the_cause(two, symbols, named):
    with pytest.raises(SymbolError, match=named.replace("?", r"\?")) as err:
        two.run(symbols)
    assert isinstance(err.value, ValueError)


def test_a_step_that_is_not_a_checkpoint_is_refused():
    with pytest.raises(ValueError, match="not a checkpoint"):
        load("induction-2l", step=3)


@pytest.mark.parametrize("name", ["induction-2l", "induction-1l"])
def test_log_json_schema(name):
    log = json.loads((run_dir(name) / "log.json").read_text())
    d = load(name)
    assert log["recipe"] == name and log["checkpoints"][0]["step"] == 0
    steps = [c["step"] for c in log["checkpoints"]]
    assert steps == sorted(set(steps)) and len(steps) >= 10
    for c in log["checkpoints"]:
        assert {"step", "loss_first", "loss_repeat", "heads"} <= set(c)
        for kind in ("previous", "duplicate", "induction"):
            scores = np.array(c["heads"][kind])
            assert scores.shape == (d.n_layers, d.n_heads) and np.all((scores >= 0) & (scores <= 1 + 1e-6))
    for s in steps:
        assert (run_dir(name) / f"step{s:05d}.safetensors").is_file()


def test_repeating_data_keeps_each_period_distinct():
    ids = repeating(50, 40, (4, 16), torch.Generator().manual_seed(0))
    for row in ids.tolist():
        p = next(p for p in range(4, 17) if row[p:] == row[:-p])
        assert len(set(row[:p])) == p
