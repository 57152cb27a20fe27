"""Contract 13's multi_head_steps against PyTorch and transformers: grouped heads, RoPE, ALiBi and the long masks.

References: SDPA with enable_gqa=True and the same boolean or float mask; FlexAttention in eager mode on the CPU
with the rule as a block mask (and ALiBi as a score_mod written as attention-gym publishes it); transformers'
LlamaAttention (eager) with random weights from a small LlamaConfig whose key/value heads are fewer than its
query heads. Every test that imports transformers is in the reference-libraries group.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from attnlab import masks
from attnlab.multihead import MultiHeadWeights, merge_heads, multi_head_steps, pool_kv, project
from attnlab.positions import alibi_bias
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near

RULES = [
    ("full", {}),
    ("causal", {}),
    ("window", {"window": 2}),
    ("sinks", {"window": 2, "sinks": 1}),
    ("prefix", {"prefix": 3}),
    ("documents", {"documents": [0, 0, 0, 1, 1, 2, 2]}),
]
T = 7


def case(d_model: int, heads: int, kv_heads: int, dtype=torch.float64, seed: int = 0):
    weights = MultiHeadWeights.random(d_model, seed=seed, dtype=dtype, n_heads=heads, n_kv_heads=kv_heads)
    x = torch.randn(T, d_model, generator=torch.Generator().manual_seed(seed + 1), dtype=dtype)
    return weights, x


def sdpa_reference(steps, mask: torch.Tensor) -> torch.Tensor:
    """PyTorch's fused attention on our per-head queries and the shared (un-repeated) keys and values."""
    q, k, v = steps.heads.q[None], steps.k_shared[None], steps.v_shared[None]  # (1, H or H_kv, T, d_k)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)[0]


@pytest.mark.parametrize("kind, kw", RULES)
@pytest.mark.parametrize("heads, kv_heads", [(4, 4), (4, 2), (4, 1), (6, 3)])
@pytest.mark.parametrize("rope", [None, "half", "interleaved"])
def test_grouped_heads_with_any_mask_equal_sdpa_with_enable_gqa(kind, kw, heads, kv_heads, rope):
    weights, x = case(24, heads, kv_heads)
    mask = masks.build(kind, T, **kw)
    steps = multi_head_steps(x, x, weights, heads, n_kv_heads=kv_heads, rope=rope, attn_mask=mask)
    assert steps.n_kv_heads == kv_heads and steps.k_shared.shape == (kv_heads, T, 24 // heads)
    assert_near(steps.heads.output, sdpa_reference(steps, mask))
    group = heads // kv_heads
    for h in range(heads):  # query head h reads key/value head h // group
        assert torch.equal(steps.heads.k[h], steps.k_shared[h // group])
        assert torch.equal(steps.heads.v[h], steps.v_shared[h // group])


@pytest.mark.parametrize("kind, kw", RULES)
@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (3, 3), (5, 1)])
def test_alibi_is_the_same_float_mask_for_sdpa(kind, kw, heads, kv_heads):
    weights, x = case(2 * heads * 3 if heads == 3 else 4 * heads, heads, kv_heads)  # d_k 6 or 4
    allowed = masks.build(kind, T, **kw)
    steps = multi_head_steps(x, x, weights, heads, n_kv_heads=kv_heads, alibi=True, attn_mask=allowed)
    bias = alibi_bias(heads, T).masked_fill(~allowed, float("-inf"))  # (H, T, T): ALiBi where allowed
    assert torch.equal(steps.alibi, alibi_bias(heads, T))
    assert torch.equal(steps.heads.masked, steps.heads.scaled + bias)  # the bias is added to the scaled scores
    assert_near(steps.heads.output, sdpa_reference(steps, bias))


def gym_alibi(n_heads: int):
    """attention-gym's ALiBi score_mod (a power-of-2 head count): score + (kv_idx - q_idx) * 2^(-8(h+1)/H)."""

    def alibi_mod(score, b, h, q_idx, kv_idx):
        scale = torch.exp2(-((h + 1) * 8.0 / n_heads))
        return score + (kv_idx - q_idx) * scale

    return alibi_mod


def flex(steps, rule, score_mod=None) -> torch.Tensor:
    """FlexAttention in eager mode (its unfused path) with the rule as a block mask, GQA on."""
    q, k, v = steps.heads.q[None], steps.k_shared[None], steps.v_shared[None]
    block = create_block_mask(rule, None, None, q.size(-2), k.size(-2), device="cpu")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
        return flex_attention(q, k, v, score_mod=score_mod, block_mask=block, enable_gqa=True)[0]


@REFERENCE_GROUP  # FlexAttention's first eager trace takes seconds: one worker pays it
@pytest.mark.parametrize("kind, kw", RULES[2:])  # causal is FlexAttention's case below, with ALiBi
def test_flex_attention_with_the_same_mask_mod_agrees(kind, kw):
    weights, x = case(16, 4, 2)
    steps = multi_head_steps(x, x, weights, 4, rope="half", attn_mask=masks.build(kind, T, **kw))
    rule = masks.mask_mod(kind, **kw)
    assert_near(steps.heads.output, flex(steps, rule))


@REFERENCE_GROUP
@pytest.mark.parametrize("kind, kw", [("causal", {}), ("documents", RULES[5][1])])
def test_alibi_equals_flex_attention_with_attention_gyms_score_mod(kind, kw):
    weights, x = case(16, 4, 1)  # multi-query: one key/value head for four query heads
    steps = multi_head_steps(x, x, weights, 4, alibi=True, attn_mask=masks.build(kind, T, **kw))
    ref = flex(steps, masks.mask_mod(kind, **kw), gym_alibi(4))  # (kv - q) * m = -m |i - j| below the diagonal
    assert_near(steps.heads.output, ref)


def same(a: MultiHeadWeights, b: MultiHeadWeights) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.as_dict().values(), b.as_dict().values(), strict=True))


def test_classic_weights_and_settings_give_todays_numbers_exactly():
    """n_kv_heads == heads, no RoPE, no ALiBi: the very same weights and stages as before contract 13."""
    for init in ("random", "identity", "zeros"):
        classic = MultiHeadWeights.random(8, seed=3, init=init)
        assert same(classic, MultiHeadWeights.random(8, seed=3, init=init, n_heads=2, n_kv_heads=2))
    stack = torch.randn(4, 8, 8, generator=torch.Generator().manual_seed(3), dtype=torch.float64) / 8**0.5
    assert same(MultiHeadWeights.random(8, seed=3), MultiHeadWeights(*stack))  # the seeded draw, spelled out
    x = torch.randn(5, 8, dtype=torch.float64)
    steps = multi_head_steps(x, x, MultiHeadWeights.random(8, seed=3), 2, is_causal=True)
    assert steps.n_kv_heads == 2 and steps.rope is None and steps.alibi is None and steps.q_unrotated is None
    assert steps.k_shared is steps.heads.k and steps.group == 1


def test_grouped_weights_pool_each_groups_columns():
    square = MultiHeadWeights.random(12, seed=5)
    grouped = MultiHeadWeights.random(12, seed=5, n_heads=6, n_kv_heads=2)
    assert grouped.w_k.shape == (12, 4) and grouped.d_kv == 4 and grouped.grouped and grouped.kv_heads(6) == 2
    assert torch.equal(grouped.w_q, square.w_q) and torch.equal(grouped.w_o, square.w_o)
    first_group = square.w_k[:, 0:6].reshape(12, 3, 2).mean(dim=1)  # heads 0, 1, 2 (width 2) averaged
    assert torch.allclose(grouped.w_k[:, 0:2], first_group, atol=1e-15)
    assert torch.equal(pool_kv(square.w_v, 6, 2), grouped.w_v)


def test_nn_multihead_attention_cannot_hold_grouped_weights():
    grouped = MultiHeadWeights.random(8, n_heads=4, n_kv_heads=2)
    with pytest.raises(ValueError, match="nn.MultiheadAttention"):
        grouped.to_torch(4)
    fused = grouped.fused_qkv()
    assert fused.shape == (8, 8 + 2 * 4)


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda w, x: multi_head_steps(x, x, w, 4, n_kv_heads=3), "n_kv_heads"),
        (lambda w, x: multi_head_steps(x, x, w, 4, n_kv_heads=4), "n_kv_heads"),
        (lambda w, x: multi_head_steps(x, x, w, 4, rope="rotary"), "rope"),
        (lambda w, x: multi_head_steps(x, x, w, 1), "W_K"),  # one head of width 8: W_K's 4 columns hold no head
        (lambda w, x: multi_head_steps(x[:, :6], x[:, :6], MultiHeadWeights.random(6), 2, rope="half"), "rope"),
        (lambda w, x: MultiHeadWeights(w.w_q, w.w_k, w.w_q, w.w_o), "W_K and W_V"),
        (lambda w, x: MultiHeadWeights.random(8, n_heads=4, n_kv_heads=3), "n_kv_heads"),
    ],
)
def test_a_bad_argument_is_a_value_error_naming_it(call, named):
    weights = MultiHeadWeights.random(8, n_heads=4, n_kv_heads=2)
    with pytest.raises(ValueError, match=named):
        call(weights, torch.randn(3, 8, dtype=torch.float64))


def test_cross_attention_rotates_queries_and_keys_at_their_own_positions():
    weights = MultiHeadWeights.random(8, n_heads=2, n_kv_heads=1)
    x_q, x_kv = torch.randn(3, 8, dtype=torch.float64), torch.randn(5, 8, dtype=torch.float64)
    steps = multi_head_steps(x_q, x_kv, weights, 2, rope="interleaved", alibi=True)
    assert steps.heads.weights.shape == (2, 3, 5) and steps.alibi.shape == (2, 3, 5)
    assert_near(steps.heads.output, sdpa_reference(steps, alibi_bias(2, 3, 5)))


def llama_case(heads: int, kv_heads: int, head_dim: int, base: float, t: int, seed: int):
    """A LlamaAttention with random weights (eager attention), its rotary embedding, an input and a causal mask."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=heads * head_dim,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        rope_theta=base,
        attention_bias=False,
        attention_dropout=0.0,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    attention = LlamaAttention(config, layer_idx=0).eval()
    x = torch.randn(1, t, heads * head_dim)
    cos_sin = LlamaRotaryEmbedding(config)(x, torch.arange(t)[None])
    causal = torch.full((t, t), float("-inf")).triu(1)[None, None]  # (1, 1, T, T): what Llama's mask builder adds
    return attention, x, cos_sin, causal


@REFERENCE_GROUP
@pytest.mark.parametrize(
    "heads, kv_heads, head_dim, base, t", [(4, 2, 4, 10000.0, 6), (8, 2, 8, 500000.0, 9), (4, 1, 6, 10000.0, 5)]
)
def test_equal_to_transformers_llama_attention(heads, kv_heads, head_dim, base, t):
    attention, x, cos_sin, causal = llama_case(heads, kv_heads, head_dim, base, t, seed=heads + t)
    with torch.no_grad():
        out, weights_ref = attention(x, cos_sin, causal)
    linear = {name: getattr(attention, f"{name}_proj").weight.detach().T for name in "qkvo"}  # nn.Linear holds W^T
    weights = MultiHeadWeights(linear["q"], linear["k"], linear["v"], linear["o"])
    steps = multi_head_steps(
        x[0], x[0], weights, heads, n_kv_heads=kv_heads, rope="half", rope_base=base, is_causal=True
    )
    assert weights.kv_heads(heads) == kv_heads
    assert_near(steps.output, out[0])
    assert_near(steps.heads.weights, weights_ref[0])
    concat_ref = merge_heads(
        F.scaled_dot_product_attention(steps.heads.q, steps.heads.k, steps.heads.v, is_causal=True)
    )
    assert_near(project(concat_ref, weights.w_o), out[0])


@REFERENCE_GROUP
def test_interleaved_pairs_are_not_llamas_layout_on_the_same_weights():
    attention, x, cos_sin, causal = llama_case(4, 2, 4, 10000.0, 6, seed=0)
    with torch.no_grad():
        out, _ = attention(x, cos_sin, causal)
    linear = {name: getattr(attention, f"{name}_proj").weight.detach().T for name in "qkvo"}
    weights = MultiHeadWeights(linear["q"], linear["k"], linear["v"], linear["o"])
    steps = multi_head_steps(x[0], x[0], weights, 4, rope="interleaved", is_causal=True)
    assert (steps.output - out[0]).abs().max() > 1e-3
