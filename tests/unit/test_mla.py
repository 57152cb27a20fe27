"""Multi-head latent attention (contract 14) against transformers' DeepseekV3Attention, SDPA and its absorbed form."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.mla import MLAWeights, cache_per_token, mla_steps
from tests.conftest import REFERENCE_GROUP
from tests.examples import examples
from tests.near import assert_near

shapes = st.tuples(
    st.integers(1, 24),  # d_model
    st.integers(1, 4),  # heads
    st.integers(1, 16),  # latent
    st.integers(1, 8),  # nope_dim
    st.integers(1, 4).map(lambda r: 2 * r),  # rope_dim (pairs)
    st.integers(1, 8),  # v_dim
    st.integers(1, 9),  # tokens
)


@settings(max_examples=examples(12), deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16), causal=st.booleans())
def test_absorbed_gives_the_plain_weights_and_output(shape, seed, causal):
    d, h, c, nope, r, v, t = shape
    for dtype in (torch.float32, torch.float64):
        w = MLAWeights.random(d, h, c, nope, r, v, seed=seed, dtype=dtype)
        x = torch.randn(t, d, generator=torch.Generator().manual_seed(seed), dtype=dtype)
        plain = mla_steps(x, w, h, is_causal=causal)
        fold = mla_steps(x, w, h, is_causal=causal, absorbed=True)
        assert fold.k is None and fold.v is None and fold.q_absorbed.shape == (h, t, c + r)
        assert_near(fold.weights, plain.weights)
        assert_near(fold.output, plain.output)
        torch.testing.assert_close(fold.latent, plain.latent, atol=0, rtol=0)  # the same cache, bit for bit


def test_the_plain_path_is_sdpa_on_its_own_per_head_keys_and_values():
    w = MLAWeights.random(32, 4, 16, 8, 4, 6, seed=1, dtype=torch.float64)
    x = torch.randn(7, 32, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    s = mla_steps(x, w, 4)
    raw = x @ w.w_dkv  # the latent written again: x W_DKV, RMS-normalised
    latent = raw / raw.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt() * w.kv_norm
    assert_near(s.latent, latent)
    k_nope = torch.einsum("tc,chn->htn", latent, w.w_uk.view(16, 4, 8))
    assert_near(s.k[..., :8], k_nope)
    assert torch.equal(s.k[..., 8:], s.k_rope.expand(4, 7, 4))  # every head reads the one rotated key, as it is
    assert_near(s.v, torch.einsum("tc,chv->htv", latent, w.w_uv.view(16, 4, 6)))
    sdpa = F.scaled_dot_product_attention(s.q, s.k, s.v, is_causal=True, scale=1 / math.sqrt(12))
    assert_near(s.heads, sdpa)
    assert_near(s.output, sdpa.transpose(0, 1).reshape(7, 24) @ w.w_o)
    assert s.cached_per_token == 16 + 4 < cache_per_token(32, 4, 4) == 64  # MHA of the same width: 2 x 32


def test_the_rotated_key_turns_with_deepseeks_interleaved_pairs():
    w = MLAWeights.random(8, 1, 4, 2, 4, 2, seed=2, dtype=torch.float64)
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    raw = torch.view_as_complex((x @ w.w_kr).view(5, 2, 2).contiguous())  # pairs (0, 1) and (2, 3)
    theta = 10000.0 ** (-torch.arange(0, 4, 2, dtype=torch.float64) / 4)
    turned = raw * torch.polar(torch.ones(5, 2, dtype=torch.float64), torch.arange(5.0)[:, None] * theta)
    assert_near(mla_steps(x, w, 1).k_rope, torch.view_as_real(turned).flatten(1))


def deepseek_case(h: int, d: int, c: int, nope: int, r: int, v: int, t: int, seed: int):
    """transformers' DeepseekV3Attention (eager, no query low-rank, interleaved RoPE) holding our random weights."""
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

    config = DeepseekV3Config(
        hidden_size=d,
        num_attention_heads=h,
        num_key_value_heads=h,
        kv_lora_rank=c,
        q_lora_rank=None,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=r,
        v_head_dim=v,
        rope_interleave=True,
        num_hidden_layers=1,
        rms_norm_eps=1e-6,
    )
    config._attn_implementation = "eager"
    ours = MLAWeights.random(d, h, c, nope, r, v, seed=seed)
    theirs = DeepseekV3Attention(config, layer_idx=0).eval()
    with torch.no_grad():  # nn.Linear keeps W^T; kv_b_proj holds each head's [k_nope | v] rows side by side
        theirs.q_proj.weight.copy_(ours.w_q.T)
        theirs.kv_a_proj_with_mqa.weight.copy_(torch.cat([ours.w_dkv, ours.w_kr], 1).T)
        theirs.kv_a_layernorm.weight.copy_(ours.kv_norm)
        up = torch.cat([ours.w_uk.view(c, h, nope), ours.w_uv.view(c, h, v)], -1).reshape(c, h * (nope + v))
        theirs.kv_b_proj.weight.copy_(up.T)
        theirs.o_proj.weight.copy_(ours.w_o.T)
    x = torch.randn(1, t, d, generator=torch.Generator().manual_seed(seed))
    cos_sin = DeepseekV3RotaryEmbedding(config)(x, torch.arange(t)[None])
    causal = torch.full((t, t), float("-inf")).triu(1)[None, None]
    return ours, theirs, x, cos_sin, causal


@REFERENCE_GROUP
@pytest.mark.parametrize(("h", "d", "c", "nope", "r", "v", "t"), [(4, 32, 16, 8, 4, 6, 7), (2, 24, 12, 4, 8, 4, 5)])
@pytest.mark.parametrize("absorbed", [False, True])
def test_equal_to_transformers_deepseek_v3_attention(h, d, c, nope, r, v, t, absorbed):
    ours, theirs, x, cos_sin, causal = deepseek_case(h, d, c, nope, r, v, t, seed=h + t)
    with torch.no_grad():
        out, weights = theirs(x, cos_sin, causal)
    s = mla_steps(x[0], ours, h, absorbed=absorbed)
    assert_near(s.output, out[0])
    assert_near(s.weights, weights[0])


def test_bad_arguments_raise_naming_them():
    w = MLAWeights.random(8, 2, 4, 2, 2, 2)
    with pytest.raises(ValueError, match="x must be"):
        mla_steps(torch.zeros(1, 3, 8), w, 2)
    with pytest.raises(ValueError, match="d_model"):
        mla_steps(torch.zeros(3, 6), w, 2)
    with pytest.raises(ValueError, match="n_heads"):
        mla_steps(torch.zeros(3, 8), w, 4)
    with pytest.raises(ValueError, match="rope_dim"):
        MLAWeights.random(8, 2, 4, 2, 3, 2)
    with pytest.raises(ValueError, match="latent"):
        MLAWeights.random(8, 2, 0, 2, 2, 2)
    with pytest.raises(ValueError, match="kv_heads"):
        cache_per_token(8, 4, 3)
