"""Contract 2: multi_head_steps against nn.MultiheadAttention, and the weights' conventions."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attnlab.multihead import (
    BIAS_NAMES,
    MultiHeadWeights,
    check_heads,
    merge_heads,
    multi_head_steps,
    project,
    split_heads,
)
from tests.examples import examples
from tests.near import assert_near

PROPS = settings(max_examples=examples(50), deadline=None)
SHAPES = [(2, 1), (4, 2), (6, 3), (8, 2), (8, 4), (12, 3), (16, 8), (16, 16)]  # (d_model, heads)


def with_biases(weights: MultiHeadWeights, gen: torch.Generator) -> MultiHeadWeights:
    """The same projections plus four random biases."""
    biases = torch.randn(4, weights.d_model, generator=gen, dtype=weights.w_q.dtype)
    return weights.replace(**dict(zip(BIAS_NAMES, biases, strict=True)))


@st.composite
def mha_case(draw):
    """Weights, inputs (self or cross), our mask arguments and the equivalent nn.MultiheadAttention mask."""
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    d_model, heads = draw(st.sampled_from(SHAPES))
    b = draw(st.integers(1, 2))
    cross = draw(st.booleans())
    t_q = draw(st.integers(1, 5))
    t_k = draw(st.integers(1, 5)) if cross else t_q
    seed = draw(st.integers(0, 2**31))
    gen = torch.Generator().manual_seed(seed)
    weights = MultiHeadWeights.random(d_model, seed=seed, dtype=dtype)
    if draw(st.booleans()):  # b_Q, b_K, b_V, b_O as a trained BERT layer has them
        weights = with_biases(weights, gen)
    x_q = torch.randn(b, t_q, d_model, generator=gen, dtype=dtype)
    x_kv = torch.randn(b, t_k, d_model, generator=gen, dtype=dtype) if cross else x_q
    kind = draw(st.sampled_from(["none", "causal", "bool", "float", "float_per_head"]))
    ours: dict = {}
    theirs = None  # nn.MultiheadAttention's attn_mask: bool True = NOT allowed, float = added
    if kind == "causal":
        ours["is_causal"] = True
        theirs = ~torch.ones(t_q, t_k, dtype=torch.bool).tril()
    elif kind == "bool":
        allowed = torch.rand(t_q, t_k, generator=gen) < 0.7
        ours["attn_mask"], theirs = allowed, ~allowed
    elif kind == "float":
        fmask = torch.randn(t_q, t_k, generator=gen, dtype=dtype)
        fmask = fmask.masked_fill(torch.rand(t_q, t_k, generator=gen) < 0.3, float("-inf"))
        ours["attn_mask"], theirs = fmask, fmask
    elif kind == "float_per_head":
        fmask = torch.randn(b, heads, t_q, t_k, generator=gen, dtype=dtype)
        ours["attn_mask"], theirs = fmask, fmask.reshape(b * heads, t_q, t_k)
    return weights, heads, x_q, x_kv, ours, theirs


@PROPS
@given(mha_case())
def test_output_matches_nn_multihead_attention(case):
    weights, heads, x_q, x_kv, ours, theirs = case
    steps = multi_head_steps(x_q, x_kv, weights, heads, **ours)
    mha = weights.to_torch(heads)
    assert isinstance(mha, nn.MultiheadAttention) and not mha.training
    with torch.no_grad():
        ref, _ = mha(x_q, x_kv, x_kv, attn_mask=theirs, need_weights=False)
    seen = torch.isfinite(ref).all(dim=-1)  # (B, T_q): nn.MultiheadAttention gives NaN where a row sees no key
    assert_near(steps.output[seen], ref[seen])
    unseen = steps.output[~seen]  # ours: weights 0 there (contract 1), so the row is W_O applied to zeros, i.e. b_O
    b_o = weights.b_o if weights.b_o is not None else torch.zeros(weights.w_o.size(-1), dtype=x_q.dtype)
    if (~seen).any():
        assert_near(unseen, b_o.expand_as(unseen))
    assert not steps.heads.weights.permute(0, 2, 1, 3)[~seen].any()
    # the per-head path agrees with SDPA on the projected, split tensors too
    sdpa = F.scaled_dot_product_attention(steps.heads.q, steps.heads.k, steps.heads.v, **ours)
    assert_near(steps.heads.output, sdpa)
    assert_near(steps.concat, merge_heads(sdpa))
    assert_near(steps.output, project(steps.concat, weights.w_o, weights.b_o))
    assert mha.in_proj_bias is None if not weights.has_bias else mha.out_proj.bias is not None


@PROPS
@given(mha_case())
def test_per_head_weights_match_nn_multihead_attention(case):
    weights, heads, x_q, x_kv, ours, theirs = case
    steps = multi_head_steps(x_q, x_kv, weights, heads, **ours)
    with torch.no_grad():
        _, ref = weights.to_torch(heads)(
            x_q, x_kv, x_kv, attn_mask=theirs, need_weights=True, average_attn_weights=False
        )
    assert ref.shape == steps.heads.weights.shape  # (B, H, T_q, T_k)
    # torch 2.13's need_weights=True path gives NaN for a query that sees no key; ours gives 0
    seen = ~steps.heads.empty_rows
    assert_near(steps.heads.weights[seen], ref[seen])
    assert (steps.heads.weights[~seen] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fully_masked_query_in_nn_multihead_attention(dtype):
    """A query that may see nothing: our output row is 0, like MHA's need_weights=False (SDPA) path."""
    w = MultiHeadWeights.random(8, seed=3, dtype=dtype)
    x, y = torch.randn(1, 3, 8, dtype=dtype), torch.randn(1, 4, 8, dtype=dtype)
    allowed = torch.ones(3, 4, dtype=torch.bool)
    allowed[1] = False
    steps = multi_head_steps(x, y, w, 2, attn_mask=allowed)
    with torch.no_grad():
        ref, _ = w.to_torch(2)(x, y, y, attn_mask=~allowed, need_weights=False)
    assert (steps.heads.output[:, :, 1] == 0).all() and (steps.output[:, 1] == 0).all()
    assert_near(steps.output, ref)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("d_model,heads", SHAPES)
def test_random_nn_multihead_attention_read_back(d_model, heads, bias):
    """from_torch on a module we did not build: our steps reproduce its output (transposes and biases right)."""
    torch.manual_seed(d_model * 100 + heads)
    mha = nn.MultiheadAttention(d_model, heads, bias=bias, batch_first=True, dtype=torch.float64).eval()
    if bias:  # PyTorch starts the biases at zero; make them count
        with torch.no_grad():
            mha.in_proj_bias.normal_()
            mha.out_proj.bias.normal_()
    w = MultiHeadWeights.from_torch(mha)
    assert w.d_model == d_model and w.has_bias == bias
    if bias:
        assert torch.equal(w.b_k, mha.in_proj_bias[d_model : 2 * d_model].detach())
        assert torch.equal(w.b_o, mha.out_proj.bias.detach())
    assert torch.equal(w.w_q, mha.in_proj_weight[:d_model].detach().T)
    assert torch.equal(w.w_o, mha.out_proj.weight.detach().T)
    x, y = torch.randn(2, 5, d_model, dtype=torch.float64), torch.randn(2, 3, d_model, dtype=torch.float64)
    with torch.no_grad():
        ref_self, _ = mha(x, x, x, need_weights=False)
        ref_cross, _ = mha(x, y, y, need_weights=False)
    assert_near(multi_head_steps(x, x, w, heads).output, ref_self)
    assert_near(multi_head_steps(x, y, w, heads).output, ref_cross)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("d_model,heads", [(4, 2), (8, 8), (12, 3)])
def test_to_torch_from_torch_round_trip(dtype, d_model, heads, bias):
    w = MultiHeadWeights.random(d_model, seed=5, dtype=dtype)
    w = with_biases(w, torch.Generator().manual_seed(5)) if bias else w
    mha = w.to_torch(heads)
    assert mha.batch_first and mha.num_heads == heads and mha.embed_dim == d_model
    assert (mha.in_proj_bias is None and mha.out_proj.bias is None) != bias
    assert mha.in_proj_weight.dtype == dtype
    back = MultiHeadWeights.from_torch(mha)
    assert back.has_bias == bias and list(back.bias_dict()) == (list(BIAS_NAMES) if bias else [])
    for name, m in {**w.as_dict(), **w.bias_dict()}.items():
        assert torch.equal(getattr(back, name), m), name
    # the round trip copies: editing the module does not reach the weights read back earlier
    with torch.no_grad():
        mha.in_proj_weight.zero_()
    assert not torch.equal(back.w_q, torch.zeros_like(back.w_q))


def test_from_torch_refuses_separate_kv_projections():
    mha = nn.MultiheadAttention(4, 2, bias=False, kdim=3, vdim=3, batch_first=True)
    with pytest.raises(ValueError):
        MultiHeadWeights.from_torch(mha)


def test_from_torch_refuses_an_appended_bias_key_and_value():
    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True, batch_first=True)
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadWeights.from_torch(mha)


def test_biases_come_all_four_or_none_and_have_shape_d_model():
    eye, b = torch.eye(4), torch.ones(4)
    with pytest.raises(ValueError, match="all four"):
        MultiHeadWeights(eye, eye, eye, eye, b_q=b)
    with pytest.raises(ValueError, match=r"\(4,\)"):
        MultiHeadWeights(eye, eye, eye, eye, b, b, b, torch.ones(3))
    assert not MultiHeadWeights(eye, eye, eye, eye).has_bias


def test_biases_shift_every_projection_and_survive_replace_and_to():
    """Q = X W_Q + b_Q per row, output = concat W_O + b_O; replace() and to() keep the biases."""
    w = with_biases(MultiHeadWeights.random(6, seed=4), torch.Generator().manual_seed(4))
    x = torch.randn(3, 6, dtype=torch.float64)
    steps = multi_head_steps(x, x, w, 3)
    assert_near(steps.q, x @ w.w_q + w.b_q)
    assert_near(steps.v, x @ w.w_v + w.b_v)
    assert_near(steps.output, steps.concat @ w.w_o + w.b_o)
    assert torch.equal(steps.heads.k[1], (x @ w.w_k + w.b_k)[:, 2:4])  # head h reads b_K's entries h*d_k:(h+1)*d_k
    r = w.replace(w_k=torch.zeros(6, 6, dtype=torch.float64))
    assert torch.equal(r.b_k, w.b_k) and (r.w_k == 0).all()
    f = w.to(torch.float32)
    assert all(b.dtype == torch.float32 for b in f.bias_dict().values()) and torch.equal(f.b_o, w.b_o.float())
    assert not MultiHeadWeights.random(6).to(torch.float32).has_bias


def test_fused_qkv_equals_the_three_projections():
    w = MultiHeadWeights.random(6, seed=1)
    x = torch.randn(4, 6, dtype=torch.float64)
    fused = w.fused_qkv()
    assert fused.shape == (6, 18)
    q, k, v = (x @ fused).split(6, dim=-1)
    assert_near(q, x @ w.w_q)
    assert_near(k, x @ w.w_k)
    assert_near(v, x @ w.w_v)


def test_head_h_reads_columns_h_dk_to_h_plus_one_dk():
    """The seeds' convention: Q = X @ W_Q, head h uses columns h*d_k:(h+1)*d_k."""
    d_model, heads = 12, 3
    d_k = d_model // heads
    w = MultiHeadWeights.random(d_model, seed=9)
    x = torch.randn(5, d_model, dtype=torch.float64)
    y = torch.randn(7, d_model, dtype=torch.float64)
    steps = multi_head_steps(x, y, w, heads)
    assert steps.d_k == d_k and steps.n_heads == heads
    assert steps.heads.q.shape == (heads, 5, d_k) and steps.heads.v.shape == (heads, 7, d_k)
    assert steps.heads.weights.shape == (heads, 5, 7)
    for h in range(heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        assert_near(steps.heads.q[h], x @ w.w_q[:, cols])
        assert_near(steps.heads.k[h], y @ w.w_k[:, cols])
        assert_near(steps.heads.v[h], y @ w.w_v[:, cols])
        assert_near(steps.concat[:, cols], steps.heads.output[h])
    assert steps.heads.scale == pytest.approx(1 / math.sqrt(d_k))
    assert steps.x_q is x and steps.x_kv is y
    assert_near(steps.q, x @ w.w_q)


@given(
    lead=st.lists(st.integers(1, 3), max_size=2),
    t=st.integers(1, 6),
    shape=st.sampled_from(SHAPES),
)
@PROPS
def test_split_merge_round_trip(lead, t, shape):
    d_model, heads = shape
    x = torch.randn(*lead, t, d_model)
    split = split_heads(x, heads)
    assert split.shape == (*lead, heads, t, d_model // heads)
    assert torch.equal(merge_heads(split), x)
    d_k = d_model // heads
    for h in range(heads):
        assert torch.equal(split[..., h, :, :], x[..., h * d_k : (h + 1) * d_k])
    y = torch.randn(*lead, heads, t, d_k)
    assert torch.equal(split_heads(merge_heads(y), heads), y)


@pytest.mark.parametrize("d_model,heads", [(8, 3), (6, 4), (5, 2), (4, 0), (4, -2), (3, 6)])
def test_heads_that_do_not_divide_d_model_raise(d_model, heads):
    w = MultiHeadWeights.random(d_model, seed=0)
    x = torch.randn(2, d_model, dtype=torch.float64)
    with pytest.raises(ValueError, match="divisor"):
        check_heads(d_model, heads)
    with pytest.raises(ValueError):
        multi_head_steps(x, x, w, heads)
    with pytest.raises(ValueError):
        w.to_torch(heads)


def test_weights_must_be_square_and_equal():
    eye = torch.eye(4)
    with pytest.raises(ValueError):
        MultiHeadWeights(eye, eye, eye, torch.eye(3))
    with pytest.raises(ValueError):
        MultiHeadWeights(torch.zeros(4, 3), eye, eye, eye)


def test_random_is_deterministic_and_seed_dependent():
    a = MultiHeadWeights.random(8, seed=42)
    b = MultiHeadWeights.random(8, seed=42)
    c = MultiHeadWeights.random(8, seed=43)
    for name in ("w_q", "w_k", "w_v", "w_o"):
        assert torch.equal(getattr(a, name), getattr(b, name))
        assert not torch.equal(getattr(a, name), getattr(c, name))
    assert a.w_q.dtype == torch.float64
    assert not torch.equal(a.w_q, a.w_k)  # four different matrices, not one repeated
    # the global RNG plays no part
    torch.manual_seed(0)
    d = MultiHeadWeights.random(8, seed=42)
    torch.manual_seed(1)
    e = MultiHeadWeights.random(8, seed=42)
    assert torch.equal(d.w_v, e.w_v) and torch.equal(d.w_v, a.w_v)
    # float32 weights are the float64 ones rounded, so the dtype does not change the numbers
    f = MultiHeadWeights.random(8, seed=42, dtype=torch.float32)
    assert f.w_q.dtype == torch.float32 and torch.equal(f.w_q, a.w_q.float())


def test_random_is_scaled_normal():
    w = MultiHeadWeights.random(64, seed=0)
    values = torch.cat([m.flatten() for m in w.as_dict().values()])  # 16,384 draws
    assert abs(values.mean().item()) < 0.01
    assert abs(values.std().item() * math.sqrt(64) - 1) < 0.03  # N(0, 1/d_model)


@pytest.mark.parametrize("causal", [False, True])
def test_identity_init_is_pure_similarity(causal):
    w = MultiHeadWeights.random(6, seed=123, init="identity")
    for m in w.as_dict().values():
        assert torch.equal(m, torch.eye(6, dtype=torch.float64))
    x = torch.randn(4, 6, dtype=torch.float64)
    steps = multi_head_steps(x, x, w, 2, is_causal=causal)
    assert torch.equal(steps.q, x) and torch.equal(steps.k, x) and torch.equal(steps.v, x)
    assert torch.equal(steps.output, steps.concat)
    for h in range(2):
        xs = x[:, 3 * h : 3 * h + 3]
        assert_near(steps.heads.scores[h], xs @ xs.T)
    # the seeds' "Thinking Machines"-style self-similarity: the diagonal is each row's squared norm
    assert_near(steps.heads.scores.diagonal(dim1=-2, dim2=-1).sum(0), (x * x).sum(-1))


@pytest.mark.parametrize("causal", [False, True])
def test_zeros_init_gives_uniform_attention_and_zero_output(causal):
    w = MultiHeadWeights.random(4, seed=7, init="zeros")
    x = torch.randn(5, 4, dtype=torch.float64)
    steps = multi_head_steps(x, x, w, 2, is_causal=causal)
    assert (steps.heads.scores == 0).all()
    allowed = torch.ones(5, 5, dtype=torch.float64)
    allowed = allowed.tril() if causal else allowed
    uniform = allowed / allowed.sum(-1, keepdim=True)
    assert_near(steps.heads.weights, uniform.expand(2, 5, 5))
    assert (steps.output == 0).all()


def test_replace_and_to():
    w = MultiHeadWeights.random(4, seed=0)
    z = torch.zeros(4, 4, dtype=torch.float64)
    r = w.replace(w_k=z)
    assert torch.equal(r.w_k, z) and torch.equal(r.w_q, w.w_q) and not torch.equal(w.w_k, z)
    f = w.to(torch.float32)
    assert all(m.dtype == torch.float32 for m in f.as_dict().values())
    assert list(w.as_dict()) == ["w_q", "w_k", "w_v", "w_o"]


def test_dropout_in_multi_head_steps_matches_the_attention_dropout():
    w = MultiHeadWeights.random(8, seed=2)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    torch.manual_seed(99)
    steps = multi_head_steps(x, x, w, 4, dropout_p=0.5)
    torch.manual_seed(99)
    ref = F.scaled_dot_product_attention(steps.heads.q, steps.heads.k, steps.heads.v, dropout_p=0.5)
    assert_near(steps.heads.output, ref)
    assert not torch.equal(steps.heads.dropped, steps.heads.weights)
