"""Contract 1: attention_steps against F.scaled_dot_product_attention, stage by stage."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention import SDPBackend, sdpa_kernel

from attnlab.attention import AttentionSteps, attention_steps, causal_mask, mask_to_bias, stable_softmax
from tests.examples import examples
from tests.near import assert_near

PROPS = settings(max_examples=examples(60), deadline=None)
DTYPES = st.sampled_from([torch.float32, torch.float64])


@st.composite
def attention_case(draw, mask_kinds=("none", "bool", "float", "causal")):
    """Random q, k, v (batch dims, heads, T_q != T_k, d_k != d_v) and SDPA-valid mask arguments."""
    dtype = draw(DTYPES)
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))  # (), (B,), (B, H)
    t_q, t_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    q = torch.randn(*lead, t_q, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*lead, t_k, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*lead, t_k, d_v, generator=gen, dtype=dtype)
    scale = draw(st.one_of(st.none(), st.floats(-3, 3, allow_nan=False, width=32)))
    kind = draw(st.sampled_from(mask_kinds))
    kwargs: dict = {"scale": scale}
    if kind == "causal":
        kwargs["is_causal"] = True
    elif kind in ("bool", "float"):
        # any shape that broadcasts to (*lead, T_q, T_k): some dims 1, maybe fewer leading dims
        full = [*lead, t_q, t_k]
        keep = draw(st.integers(0, len(lead)))  # how many leading dims the mask keeps
        shape = full[len(lead) - keep :]
        shape = [1 if draw(st.booleans()) else n for n in shape[:-1]] + [shape[-1]]
        if kind == "bool":
            mask = torch.rand(*shape, generator=gen) < draw(st.sampled_from([0.3, 0.6, 0.9]))
        else:
            mask = torch.randn(*shape, generator=gen, dtype=dtype) * 2
            blocked = torch.rand(*shape, generator=gen) < draw(st.sampled_from([0.0, 0.3, 0.7]))
            mask = mask.masked_fill(blocked, float("-inf"))
        kwargs["attn_mask"] = mask
    return q, k, v, kwargs


def test_scale_zero_weighs_every_visible_key_alike():
    q, k, v = torch.randn(1, 4, 3), torch.randn(1, 4, 3), torch.randn(1, 4, 5)
    steps = attention_steps(q, k, v, is_causal=True, scale=0.0)
    visible = torch.ones(4, 4).tril()
    assert_near(steps.weights[0], visible / visible.sum(-1, keepdim=True))
    assert_near(steps.output[0], (visible / visible.sum(-1, keepdim=True)) @ v[0])


@PROPS
@given(attention_case())
def test_output_matches_sdpa(case):
    q, k, v, kwargs = case
    ours = attention_steps(q, k, v, **kwargs)
    assert ours.output.dtype == q.dtype
    if kwargs["scale"] is None or kwargs["scale"] > 0:  # torch 2.13's CPU flash kernel: NaN for scale <= 0 when causal
        ref = F.scaled_dot_product_attention(q, k, v, **kwargs)
        assert_near(ours.output, ref)
    # and against the reference math backend explicitly (the default may pick the CPU flash kernel)
    with sdpa_kernel(SDPBackend.MATH):
        ref_math = F.scaled_dot_product_attention(q, k, v, **kwargs)
    assert_near(ours.output, ref_math)


@PROPS
@given(attention_case())
def test_every_stage(case):
    q, k, v, kwargs = case
    s = attention_steps(q, k, v, **kwargs)
    d_k = q.size(-1)
    expected_scale = 1 / math.sqrt(d_k) if kwargs["scale"] is None else kwargs["scale"]
    assert s.scale == pytest.approx(expected_scale, rel=1e-12)

    # scores = q @ k^T, computed independently as a sum of products
    dots = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1)
    assert_near(s.scores, dots)
    assert_near(s.scaled, s.scores * expected_scale)

    # the mask: exactly -inf where blocked, scaled (+ float mask) elsewhere, never a -1e9 sentinel
    allowed = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool)
    additive = torch.zeros((), dtype=q.dtype)
    if kwargs.get("is_causal"):
        allowed = torch.ones_like(allowed).tril()
    mask = kwargs.get("attn_mask")
    if mask is not None and mask.dtype == torch.bool:
        allowed = allowed & mask
    elif mask is not None:
        allowed = allowed & ~torch.isneginf(mask)
        additive = torch.where(torch.isneginf(mask), 0.0, mask)
    allowed = allowed.expand_as(s.masked)
    assert torch.equal(s.blocked, ~allowed)
    assert torch.isneginf(s.masked[~allowed]).all()
    expected_masked = (s.scaled + additive).expand_as(s.masked)
    assert_near(s.masked[allowed], expected_masked[allowed])
    assert torch.isfinite(s.masked[allowed]).all()
    assert s.bias.shape == s.masked.shape

    # softmax: zero where blocked, rows sum to 1, or are all 0 for a query that sees nothing
    empty = ~allowed.any(-1)
    assert torch.equal(s.empty_rows, empty)
    assert (s.weights[~allowed] == 0).all()
    assert (s.weights >= 0).all()
    sums = s.weights.sum(-1)
    assert_near(sums[~empty], torch.ones_like(sums[~empty]))
    assert (sums[empty] == 0).all()
    assert (s.output[empty] == 0).all()
    ref = torch.softmax(s.masked, dim=-1)
    assert_near(s.weights[~empty], ref[~empty])
    # the stable softmax's first step: every row that sees a key has max exactly 0 after the shift
    if (~empty).any():
        assert (s.shifted.amax(-1)[~empty] == 0).all()
    assert not torch.isnan(s.weights).any()
    assert s.dropped is s.weights  # no dropout requested
    assert_near(s.output, s.weights @ v)


def test_steps_is_frozen_and_keeps_inputs():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    s = attention_steps(q, k, v)
    assert isinstance(s, AttentionSteps)
    assert s.q is q and s.k is k and s.v is v
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.output = torch.zeros(1)  # type: ignore[misc]
    assert s.scores.shape == (2, 3, 5) and s.output.shape == (2, 3, 6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("t_q,t_k", [(3, 3), (2, 5), (5, 2), (1, 4), (4, 1)])
def test_is_causal_is_top_left_aligned(dtype, t_q, t_k):
    gen = torch.Generator().manual_seed(t_q * 10 + t_k)
    q = torch.randn(2, 3, t_q, 4, generator=gen, dtype=dtype)
    k = torch.randn(2, 3, t_k, 4, generator=gen, dtype=dtype)
    v = torch.randn(2, 3, t_k, 5, generator=gen, dtype=dtype)
    s = attention_steps(q, k, v, is_causal=True)
    i = torch.arange(t_q)[:, None]
    j = torch.arange(t_k)[None, :]
    assert torch.equal(s.blocked[0, 0], j > i)  # query i sees keys 0..i, whatever T_k is
    assert torch.equal(causal_mask(t_q, t_k), j <= i)
    assert not s.empty_rows.any()
    assert_near(s.output, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    # is_causal is the same as passing the lower-triangular boolean mask
    same = attention_steps(q, k, v, attn_mask=causal_mask(t_q, t_k))
    assert torch.equal(same.output, s.output)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("how", ["bool", "float"])
def test_query_that_sees_nothing_gets_zero(dtype, how):
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(1, 2, 3, 4, generator=gen, dtype=dtype)
    k = torch.randn(1, 2, 5, 4, generator=gen, dtype=dtype)
    v = torch.randn(1, 2, 5, 4, generator=gen, dtype=dtype) + 3  # nonzero everywhere
    allowed = torch.ones(3, 5, dtype=torch.bool)
    allowed[1] = False  # query 1 may see no key
    allowed[2, :3] = False
    mask = allowed if how == "bool" else torch.zeros(3, 5, dtype=dtype).masked_fill(~allowed, float("-inf"))
    s = attention_steps(q, k, v, attn_mask=mask)
    assert s.empty_rows.tolist() == [[[False, True, False]] * 2]
    assert (s.weights[..., 1, :] == 0).all()
    assert (s.output[..., 1, :] == 0).all()
    assert torch.isneginf(s.masked[..., 1, :]).all()
    assert not torch.isnan(s.weights).any() and not torch.isnan(s.output).any()
    assert (s.output[..., [0, 2], :] != 0).all()
    for backend in (None, SDPBackend.MATH):  # torch 2.13 returns 0 for such a row, on every CPU backend
        if backend is None:
            ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            with sdpa_kernel(backend):
                ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert (ref[..., 1, :] == 0).all()
        assert_near(s.output, ref)


def test_blocked_cells_are_minus_inf_not_a_big_negative_number():
    q = torch.randn(1, 4, 3, dtype=torch.float64)
    s = attention_steps(q, q, q, is_causal=True)
    upper = torch.ones(4, 4, dtype=torch.bool).triu(1)
    assert torch.isneginf(s.masked[0][upper]).all()
    assert torch.isneginf(s.bias[0][upper]).all() and (s.bias[0][~upper] == 0).all()
    assert torch.isfinite(s.masked[0][~upper]).all()
    bias = mask_to_bias(None, True, 2, 3, torch.float32, "cpu")
    assert bias.tolist() == [[0.0, float("-inf"), float("-inf")], [0.0, 0.0, float("-inf")]]


def test_a_finite_float_mask_is_added_not_treated_as_blocked():
    q, k = torch.randn(1, 2, 3, dtype=torch.float64), torch.randn(1, 4, 3, dtype=torch.float64)
    v = torch.randn(1, 4, 2, dtype=torch.float64)
    mask = torch.tensor([[-1e9, 0.5, 0.0, -2.0], [3.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    s = attention_steps(q, k, v, attn_mask=mask)
    assert not s.blocked.any()
    assert torch.equal(s.masked, s.scaled + mask)  # the same sum, exact by construction
    assert_near(s.output, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_stable_softmax_survives_huge_scores(dtype):
    q = torch.tensor([[[1e4, 0.0], [-1e4, 1e4], [3e4, 3e4]]], dtype=dtype)
    k = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]], dtype=dtype)
    v = torch.eye(3, dtype=dtype)[None]
    s = attention_steps(q, k, v, scale=1.0)
    assert torch.isinf(torch.exp(s.masked)).any()  # a naive softmax would overflow here
    assert torch.isfinite(s.weights).all() and torch.isfinite(s.output).all()
    # row 0: scores (1e4, 0, 1e4) -> keys 0 and 2 tie; row 1: key 1 wins; row 2: key 2 wins
    expected = torch.tensor([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=dtype)
    assert_near(s.weights[0], expected)
    assert_near(s.output, F.scaled_dot_product_attention(q, k, v, scale=1.0))


def test_stable_softmax_directly():
    x = torch.tensor([[1000.0, 1001.0], [float("-inf"), float("-inf")], [float("-inf"), 2.0]])
    shifted, w = stable_softmax(x)
    assert shifted[0].tolist() == [-1.0, 0.0]
    assert_near(w[0], torch.softmax(torch.tensor([0.0, 1.0]), -1))
    assert w[1].tolist() == [0.0, 0.0]
    assert w[2].tolist() == [0.0, 1.0]


def test_seed_example_thinking_machines():
    """The tutorials' worked example: scores 112 and 96, /sqrt(64) -> 14 and 12 -> 0.88 / 0.12."""
    q = torch.zeros(1, 64, dtype=torch.float64)
    q[0, 0] = 1.0
    k = torch.zeros(2, 64, dtype=torch.float64)
    k[0, 0], k[1, 0] = 112.0, 96.0
    v = torch.eye(2, dtype=torch.float64)
    s = attention_steps(q, k, v)
    assert s.scores.tolist() == [[112.0, 96.0]]
    assert s.scaled.tolist() == [[14.0, 12.0]]
    assert [round(x, 2) for x in s.weights[0].tolist()] == [0.88, 0.12]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_no_keys_at_all_matches_sdpa(dtype):
    q = torch.randn(2, 3, 4, dtype=dtype)
    k, v = torch.randn(2, 0, 4, dtype=dtype), torch.randn(2, 0, 5, dtype=dtype)
    s = attention_steps(q, k, v)
    ref = F.scaled_dot_product_attention(q, k, v)
    assert s.output.shape == ref.shape == (2, 3, 5)
    assert (s.output == 0).all() and (ref == 0).all()
    assert s.empty_rows.all()


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("causal", [False, True])
def test_dropout_draws_the_same_mask_as_sdpa(p, dtype, causal):
    """torch 2.13: seeded identically, SDPA's dropout (math backend, and the CPU default) equals ours."""
    gen = torch.Generator().manual_seed(11)
    q = torch.randn(2, 3, 6, 4, generator=gen, dtype=dtype)
    k = torch.randn(2, 3, 7, 4, generator=gen, dtype=dtype)
    v = torch.randn(2, 3, 7, 5, generator=gen, dtype=dtype)
    torch.manual_seed(1234)
    s = attention_steps(q, k, v, dropout_p=p, is_causal=causal)
    with sdpa_kernel(SDPBackend.MATH):
        torch.manual_seed(1234)
        ref = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
    torch.manual_seed(1234)
    ref_default = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
    assert_near(s.output, ref)
    assert_near(s.output, ref_default)
    # dropout actually happened, and the survivors are scaled by 1 / (1 - p)
    without = attention_steps(q, k, v, is_causal=causal)
    assert torch.equal(s.weights, without.weights)  # the same softmax of the same scores
    kept = s.dropped != 0
    assert not kept[without.weights != 0].all()
    assert_near(s.dropped[kept], s.weights[kept] / (1 - p))
    assert_near(s.output, s.dropped @ v)
    # and a different seed gives a different mask
    torch.manual_seed(4321)
    other = attention_steps(q, k, v, dropout_p=p, is_causal=causal)
    assert not torch.equal(other.dropped, s.dropped)


def test_dropout_rate_and_expectation():
    torch.manual_seed(0)
    q, k, v = torch.zeros(1, 200, 4), torch.zeros(1, 250, 4), torch.ones(1, 250, 1)
    s = attention_steps(q, k, v, dropout_p=0.25)  # uniform weights 1/250
    dropped_share = (s.dropped == 0).double().mean().item()
    assert abs(dropped_share - 0.25) < 0.01  # 50,000 draws
    assert abs(s.output.mean().item() - 1.0) < 0.01  # E[output] is unchanged by inverted dropout


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan")])
def test_dropout_outside_unit_interval_raises(p):
    q = torch.randn(2, 3)
    with pytest.raises(ValueError, match="dropout_p"):
        attention_steps(q, q, q, dropout_p=p)
