"""attnlab.anatomy against PyTorch: fused QKV, dropout, cross-attention, the neuron view, the preset."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.anatomy.cross import CrossConfig, bottleneck, check_cross, run_cross
from attnlab.anatomy.heads import check_dropout_p, fused_vs_separate, in_proj_blocks, multi_head_with_torch, resplit
from attnlab.anatomy.neuron import THINKING_D_K, neuron, thinking_machines, vector_with_dot
from attnlab.attention import attention_steps
from attnlab.multihead import MultiHeadWeights
from attnlab.pipeline import LabConfig, run_lab
from tests.examples import examples
from tests.near import assert_near

PROPS = settings(max_examples=examples(30), deadline=None)
SHAPES = [(4, 1), (4, 2), (8, 2), (8, 4), (12, 3), (16, 8)]


def lab(text="the cat sat on the mat", d_model=8, heads=2, causal=False, seed=0):
    return run_lab(LabConfig(text=text, d_model=d_model, heads=heads, causal=causal, seed=seed))


# ----------------------------------------------------------------- fused QKV, re-split, packing


@given(shape=st.sampled_from(SHAPES), t=st.integers(1, 7), seed=st.integers(0, 1000))
@PROPS
def test_fused_qkv_equals_three_separate_matmuls(shape, t, seed):
    d_model, _ = shape
    w = MultiHeadWeights.random(d_model, seed)
    x = torch.randn(t, d_model, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    check = fused_vs_separate(x, w)
    assert check.max_diff <= 1e-12
    assert check.fused[0].shape == (t, d_model)
    check32 = fused_vs_separate(x.float(), w)
    assert check32.fused[0].dtype == torch.float32
    assert check32.max_diff <= 1e-5


def test_resplit_same_weights_different_patterns():
    result = lab()
    maps = resplit(result.x, result.weights, [1, 2, 4])
    assert {h: tuple(m.shape) for h, m in maps.items()} == {1: (1, 6, 6), 2: (2, 6, 6), 4: (4, 6, 6)}
    assert not torch.allclose(maps[1][0], maps[2][0])  # 1 head of 8 dims != head 1 of 2 heads of 4 dims
    for m in maps.values():
        assert_near(m.sum(-1), torch.ones_like(m.sum(-1)))


def test_in_proj_weight_packs_transposed_projections():
    result = lab()
    assert in_proj_blocks(result.weights, 2) == {"q": 0.0, "k": 0.0, "v": 0.0, "o": 0.0}


# ----------------------------------------------------------------- dropout


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("causal", [False, True])
def test_dropout_matches_torch_with_the_same_generator(p, causal):
    result = lab(causal=causal)
    out = multi_head_with_torch(result.x, result.weights, 2, is_causal=causal, dropout_p=p, seed=3)
    assert out.check.output <= 1e-12 and out.check.weights <= 1e-12 and out.check.sdpa <= 1e-12
    heads = out.steps.heads
    kept = heads.dropped != 0
    assert_near(heads.dropped[kept], heads.weights[kept] / (1 - p))  # F.dropout's scaling
    if p == 0:
        assert out.zeroed == 0 and torch.equal(heads.dropped, heads.weights)


def test_dropout_is_seeded_and_leaves_global_rng_alone():
    result = lab()
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = multi_head_with_torch(result.x, result.weights, 2, dropout_p=0.5, seed=7)
    after = torch.rand(1)
    b = multi_head_with_torch(result.x, result.weights, 2, dropout_p=0.5, seed=7)
    c = multi_head_with_torch(result.x, result.weights, 2, dropout_p=0.5, seed=8)
    assert torch.equal(before, after)
    assert torch.equal(a.steps.output, b.steps.output)
    assert not torch.equal(a.steps.heads.dropped, c.steps.heads.dropped)
    assert a.zeroed > 0 and a.kept_scale == 2.0


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan"), float("inf")])
def test_dropout_p_outside_unit_interval_is_refused(p):
    with pytest.raises(ValueError):
        check_dropout_p(p)
    result = lab()
    with pytest.raises(ValueError):
        multi_head_with_torch(result.x, result.weights, 2, dropout_p=p)


# ----------------------------------------------------------------- cross-attention


def test_cross_defaults_match_torch_and_shapes():
    config = CrossConfig()
    result = run_cross(config)
    assert result.source[-2:] == ["<pad>", "<pad>"] and len(result.target) == 6
    assert result.cross.heads.scores.shape == (2, 6, 6)
    assert result.pad == (4, 5)
    check = check_cross(result)
    assert check.sdpa <= 1e-12 and check.mha <= 1e-12 and check.decoder <= 1e-12
    weights = result.cross.heads.weights
    assert torch.all(weights[..., 4:] == 0)  # padded source tokens get weight 0
    assert_near(weights.sum(-1), torch.ones(2, 6, dtype=torch.float64))


def test_cross_different_lengths_and_causal_decoder():
    config = CrossConfig(source="a b c", target="x y z w v", causal=True, pad=())
    result = run_cross(config)
    assert result.cross.heads.scores.shape == (2, 5, 3)
    dec = result.decoder.heads.weights
    assert torch.all(dec.triu(1) == 0)  # a decoder token sees no later target token
    off = run_cross(CrossConfig(source="a b c", target="x y z w v", causal=False, pad=()))
    assert torch.all(off.decoder.heads.weights > 0)
    assert not torch.allclose(off.cross.output, result.cross.output)  # queries come from the decoder states
    assert check_cross(result).mha <= 1e-12


def test_cross_padding_hides_every_source_token():
    config = CrossConfig(source="a b", target="x y z", pad=(0, 1, 7))
    result = run_cross(config)
    assert result.all_hidden and result.pad == (0, 1)
    assert torch.all(result.cross.heads.weights == 0) and torch.all(result.cross.output == 0)
    assert bool(result.cross.heads.empty_rows.all())
    assert result.bottleneck is None
    check = check_cross(result)
    assert check.sdpa == 0.0 and math.isnan(check.mha)  # SDPA gives 0, nn.MultiheadAttention NaN


def test_cross_caps_tokens():
    result = run_cross(CrossConfig(source=" ".join(["w"] * 70), target="x"))
    assert len(result.source) == 64 and result.n_source_typed == 70


def test_bottleneck_uniform_weights_give_the_mean():
    states = torch.randn(4, 3, dtype=torch.float64)
    keep = torch.tensor([True, True, True, False])
    uniform = torch.tensor([[1 / 3, 1 / 3, 1 / 3, 0.0]] * 2, dtype=torch.float64)
    b = bottleneck(states, uniform, keep)
    assert_near(b.c, states[:3].mean(0))
    assert float(b.distance.max()) < 1e-12 and b.spread < 1e-12
    picky = torch.tensor([[1.0, 0, 0, 0], [0, 0, 1.0, 0]], dtype=torch.float64)
    b2 = bottleneck(states, picky, keep)
    assert_near(b2.contexts, states[[0, 2]])
    assert b2.spread > 0
    assert bottleneck(states, uniform, torch.zeros(4, dtype=torch.bool)) is None


# ----------------------------------------------------------------- neuron view


@given(shape=st.sampled_from(SHAPES), seed=st.integers(0, 500), causal=st.booleans(), data=st.data())
@PROPS
def test_neuron_row_equals_attention_output_row(shape, seed, causal, data):
    d_model, heads = shape
    result = lab(d_model=d_model, heads=heads, causal=causal, seed=seed)
    steps = result.steps.heads
    h = data.draw(st.integers(0, heads - 1))
    i = data.draw(st.integers(0, len(result.tokens) - 1))
    n = neuron(steps.q[h], steps.k[h], steps.v[h], i, is_causal=causal)
    assert_near(n.products.sum(-1), steps.scores[h, i])
    assert_near(n.dots, steps.scores[h, i])
    assert_near(n.weights, steps.weights[h, i])
    assert_near(n.z, steps.output[h, i])
    assert_near(n.weighted.sum(0), result.steps.heads.output[h, i])
    sdpa = F.scaled_dot_product_attention(steps.q, steps.k, steps.v, is_causal=causal)
    assert_near(n.z, sdpa[h, i])


def test_neuron_with_every_key_hidden_sees_nothing():
    q = torch.randn(2, 4, dtype=torch.float64)
    n = neuron(q, q, q, 1, keep=torch.zeros(2, dtype=torch.bool))
    assert n.sees_nothing and torch.all(n.weights == 0) and torch.all(n.z == 0)
    with pytest.raises(IndexError):
        neuron(q, q, q, 2)


# ----------------------------------------------------------------- Thinking Machines


def test_thinking_machines_numbers_are_computed():
    preset = thinking_machines()
    assert preset.tokens == ["Thinking", "Machines"]
    assert preset.q.shape == (2, THINKING_D_K) == preset.k.shape == preset.v.shape
    n = neuron(preset.q, preset.k, preset.v, 0)
    assert n.dots.tolist() == [112.0, 96.0]  # exact: the vectors are integers
    assert n.scale == 1 / 8
    assert n.scaled.tolist() == [14.0, 12.0]
    assert [round(w, 2) for w in n.weights.tolist()] == [0.88, 0.12]
    assert_near(n.weights[0].item(), 1 / (1 + math.exp(-2)))
    steps = attention_steps(preset.q, preset.k, preset.v)
    assert_near(n.z, steps.output[0])
    f32 = thinking_machines(dtype=torch.float32)
    assert (f32.q[0] @ f32.k.T).tolist() == [112.0, 96.0]
    assert torch.equal(thinking_machines().k, preset.k)  # deterministic


@given(seed=st.integers(0, 10_000), target=st.integers(-300, 300))
@PROPS
def test_vector_with_dot_hits_any_target_exactly(seed, target):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randint(-2, 3, (64,), generator=gen)
    q[0] = 1
    k = vector_with_dot(q, target, gen)
    assert int(q @ k) == target


# ----------------------------------------------------------------- what moved out of the views


@pytest.mark.parametrize(("raw", "p"), [("0", 0.0), (" 0.25 ", 0.25), ("1e-3", 0.001), ("0.999", 0.999)])
def test_dropout_p_typed_as_text(raw, p):
    from attnlab.anatomy.heads import parse_dropout_p

    assert parse_dropout_p(raw) == p


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("abc", "p_not_number"),
        ("", "p_not_number"),
        ("1", "p_out_of_range"),
        ("-0.1", "p_out_of_range"),
        ("nan", "p_out_of_range"),
        ("inf", "p_out_of_range"),
    ],
)
def test_unusable_dropout_p_is_refused_with_a_reason(raw, reason):
    from attnlab.anatomy.heads import parse_dropout_p
    from attnlab.params import Invalid

    with pytest.raises(Invalid) as bad:
        parse_dropout_p(raw)
    assert bad.value.reason == reason and bad.value.used == 0.0


def test_cross_result_carries_what_it_was_computed_from():
    from attnlab.anatomy.cross import cross_weights

    config = CrossConfig(d_model=8, heads=4, seed=5)
    result = run_cross(config)
    w_self, w_cross = cross_weights(8, 5)
    assert result.config == config
    assert torch.equal(result.w_self.w_q, w_self.w_q) and torch.equal(result.w_cross.w_o, w_cross.w_o)


@pytest.mark.parametrize("causal", [False, True])
def test_traced_neuron_agrees_with_the_full_row_and_sdpa(causal):
    from attnlab.anatomy.neuron import trace

    steps = lab(causal=causal).steps.heads
    for i in range(steps.q.size(-2)):
        traced = trace(steps.q[1], steps.k[1], steps.v[1], i, is_causal=causal)
        expected = F.scaled_dot_product_attention(steps.q[1], steps.k[1], steps.v[1], is_causal=causal)[i]
        assert_near(traced.neuron.z, expected)
        assert traced.against_row <= 1e-12 and traced.against_sdpa <= 1e-12
