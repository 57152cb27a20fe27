"""The Multi-head page's MHA / GQA / MQA comparison against PyTorch and published sizes.

MHA against nn.MultiheadAttention; GQA and MQA against SDPA with enable_gqa on key/value heads pooled here by
hand (a loop over the groups); the cache arithmetic against the key/value cache sizes published for Llama models.
Compared with tests.near's assert_near (torch.testing imports 500 modules on first use), float64's pair
where the same quantity is computed two ways.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.anatomy.grouped import cache_bytes_per_token, compare, grouped_weights, sharing
from attnlab.multihead import MultiHeadWeights
from tests.examples import examples
from tests.near import assert_near


def pooled_by_hand(w: torch.Tensor, n_heads: int, n_kv: int) -> torch.Tensor:
    """(d, d) -> (d, n_kv * d_k): each key/value head the mean of its group's query-head column blocks."""
    d_k, group = w.size(0) // n_heads, n_heads // n_kv
    blocks = [w[:, h * d_k : (h + 1) * d_k] for h in range(n_heads)]
    return torch.cat([sum(blocks[g * group : (g + 1) * group]) / group for g in range(n_kv)], dim=1)


def sdpa_output(x: torch.Tensor, w: MultiHeadWeights, w_k, w_v, n_heads: int, n_kv: int, causal: bool) -> torch.Tensor:
    """SDPA with enable_gqa on hand-pooled keys and values, heads concatenated, then W_O."""
    t, d = x.shape
    d_k = d // n_heads
    q = (x @ w.w_q).view(t, n_heads, d_k).transpose(0, 1)  # (H, T, d_k)
    k = (x @ w_k).view(t, n_kv, d_k).transpose(0, 1)  # (H_kv, T, d_k)
    v = (x @ w_v).view(t, n_kv, d_k).transpose(0, 1)
    out = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal, enable_gqa=True)[0]
    return out.transpose(0, 1).reshape(t, d) @ w.w_o


@settings(max_examples=examples(8), deadline=None)
@given(
    shape=st.sampled_from([(8, 4, 2), (12, 6, 3), (12, 6, 2), (16, 8, 4), (16, 4, 1), (6, 3, 3)]),
    t=st.integers(1, 7),
    causal=st.booleans(),
    seed=st.integers(0, 99),
)
def test_each_variant_is_sdpa_with_enable_gqa_on_heads_pooled_by_hand(shape, t, causal, seed):
    d, n_heads, n_kv = shape
    w = MultiHeadWeights.random(d, seed)
    x = torch.randn(t, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    found = compare(x, w, n_heads, n_kv, is_causal=causal)
    for v in found.variants:
        w_k, w_v = (pooled_by_hand(m, n_heads, v.n_kv_heads) for m in (w.w_k, w.w_v))
        assert_near(v.weights.w_k.numpy(), w_k.numpy())
        ref = sdpa_output(x, w, w_k, w_v, n_heads, v.n_kv_heads, causal)
        assert_near(v.steps.output.numpy(), ref.numpy())
        np.testing.assert_array_equal(v.diff.numpy(), (v.steps.output - found.mha.steps.output).numpy())
    assert [v.n_kv_heads for v in found.variants] == list(dict.fromkeys([n_heads, n_kv, 1]))


def test_mha_is_nn_multiheadattention_and_the_others_move_away_from_it():
    w = MultiHeadWeights.random(8, 3)
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    found = compare(x, w, 4, 2, is_causal=True)
    mask = torch.ones(5, 5, dtype=torch.bool).triu(1)  # nn.MultiheadAttention: True = may not attend
    with torch.no_grad():
        ref, _ = w.to_torch(4)(x[None], x[None], x[None], attn_mask=mask)
    assert_near(found.mha.steps.output.numpy(), ref[0].numpy())
    assert found.mha.max_diff == 0.0 and found.mha.rel_diff == 0.0
    gqa, mqa = found.variants[1:]
    assert gqa.max_diff > 0.01 and mqa.max_diff > 0.01  # random heads share little: pooling changes the output
    assert gqa.rel_diff == pytest.approx(float(gqa.diff.norm() / found.mha.steps.output.norm()))
    assert (gqa.weights.w_q is w.w_q) and (gqa.weights.w_o is w.w_o)  # only K and V are shared


def test_query_head_h_reads_the_key_value_head_repeat_kv_gives_it():
    for n_heads, n_kv in ((8, 2), (8, 8), (8, 1), (6, 3)):
        kv = torch.arange(n_kv)
        repeated = kv.repeat_interleave(n_heads // n_kv)  # transformers' repeat_kv / SDPA enable_gqa order
        owners = [j for j, group in enumerate(sharing(n_heads, n_kv)) for _ in group]
        assert owners == repeated.tolist()
    with pytest.raises(ValueError, match="n_kv_heads"):
        sharing(8, 3)


def test_cache_bytes_match_the_published_llama_sizes():
    layers = 32
    llama2_7b = layers * cache_bytes_per_token(32, 128)  # MHA: 32 heads of 128
    llama3_8b = layers * cache_bytes_per_token(8, 128)  # GQA: 8 key/value heads of 128
    assert llama2_7b == 512 * 1024  # 0.5 MiB per token in float16
    assert llama3_8b == 128 * 1024  # 128 KiB per token in bfloat16: a quarter
    assert cache_bytes_per_token(1, 128, 4) == 1024  # MQA in float32


def test_grouped_weights_refuses_weights_that_already_share_heads():
    w = MultiHeadWeights.random(8, 0)
    assert grouped_weights(w, 4, 4) is w
    shared = grouped_weights(w, 4, 2)
    with pytest.raises(ValueError, match="already share"):
        grouped_weights(shared, 4, 1)
    with pytest.raises(ValueError, match="n_kv_heads"):
        compare(torch.zeros(2, 8, dtype=torch.float64), w, 4, 3)
