"""Contract 13's positions: RoPE against transformers' apply_rotary_pos_emb (rotate-half) and a complex-number rotation
(interleaved pairs), its relative property, and ALiBi against transformers' BLOOM build_alibi_tensor.

Every test that imports transformers is in the reference-libraries group (one worker pays for the import).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab import positions
from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32
from tests.conftest import REFERENCE_GROUP
from tests.examples import examples
from tests.near import assert_near

PROPS = settings(max_examples=examples(25), deadline=None)


def llama_rotation(d: int, t: int, base: float, positions_: torch.Tensor | None = None):
    """transformers' own cos and sin for Llama (LlamaRotaryEmbedding) and its apply_rotary_pos_emb."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = LlamaConfig(hidden_size=4 * d, num_attention_heads=4, head_dim=d, rope_theta=base)
    x = torch.zeros(1, t, 4 * d)
    ids = (torch.arange(t) if positions_ is None else positions_)[None]  # (1, T)
    cos, sin = LlamaRotaryEmbedding(config)(x, ids)  # (1, T, d) each
    return cos, sin, apply_rotary_pos_emb


@REFERENCE_GROUP
@pytest.mark.parametrize("d, t, base", [(2, 3, 10000.0), (8, 6, 10000.0), (16, 11, 500000.0), (64, 5, 100.0)])
def test_rotate_half_equals_transformers_apply_rotary_pos_emb(d, t, base):
    gen = torch.Generator().manual_seed(d + t)
    q, k = torch.randn(2, 1, 3, t, d, generator=gen).unbind(0)  # (1, H, T, d) each
    cos, sin, apply = llama_rotation(d, t, base)
    q_ref, k_ref = apply(q, k, cos, sin)
    assert_near(positions.rope(q, base=base), q_ref)  # transformers turns by float32 angles: float32's pair
    assert_near(positions.rope(k, base=base), k_ref)


@REFERENCE_GROUP
def test_rotate_half_at_given_positions_equals_transformers():
    at = torch.tensor([3, 7, 8, 20])
    q = torch.randn(1, 2, 4, 8, generator=torch.Generator().manual_seed(1))
    cos, sin, apply = llama_rotation(8, 4, 10000.0, at)
    q_ref, _ = apply(q, q, cos, sin)
    assert_near(positions.rope(q, at), q_ref)


def complex_rotation(x: torch.Tensor, base: float) -> torch.Tensor:
    """Meta's original Llama code: pairs (2i, 2i+1) as complex numbers, times e^{i p theta_i} (view_as_complex)."""
    t, d = x.shape[-2:]
    theta = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))  # (d/2,)
    turns = torch.polar(
        torch.ones(t, d // 2, dtype=torch.float64), torch.outer(torch.arange(t, dtype=torch.float64), theta)
    )
    z = torch.view_as_complex(x.to(torch.float64).reshape(*x.shape[:-1], d // 2, 2))
    return torch.view_as_real(z * turns).flatten(-2)


@pytest.mark.parametrize("d, t, base", [(2, 4, 10000.0), (6, 9, 10000.0), (32, 7, 500000.0)])
def test_interleaved_equals_a_complex_rotation(d, t, base):
    x = torch.randn(3, t, d, dtype=torch.float64, generator=torch.Generator().manual_seed(d))
    assert_near(positions.rope(x, base=base, interleaved=True), complex_rotation(x, base))


def test_the_two_layouts_differ_on_the_same_vector_and_keep_its_length():
    x = torch.randn(5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    half, inter = positions.rope(x), positions.rope(x, interleaved=True)
    assert not torch.allclose(half[1:], inter[1:])  # not interchangeable on the same weights
    assert torch.allclose(half.norm(dim=-1), x.norm(dim=-1)) and torch.allclose(inter.norm(dim=-1), x.norm(dim=-1))
    assert torch.equal(half[0], x[0]) and torch.equal(inter[0], x[0])  # position 0 turns by nothing
    assert positions.pairs(8) == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert positions.pairs(8, interleaved=True) == [(0, 1), (2, 3), (4, 5), (6, 7)]


def test_angles_are_position_times_frequency():
    theta = positions.angles(5, 8, base=10000.0)
    assert theta.shape == (5, 4)
    for p in range(5):
        for i in range(4):
            assert theta[p, i].item() == pytest.approx(p * 10000.0 ** (-2 * i / 8), rel=1e-15)


@PROPS
@given(
    d=st.sampled_from([2, 4, 8, 16]),
    t=st.integers(1, 6),
    shift=st.integers(-50, 500),
    start=st.integers(0, 100),
    interleaved=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_shifting_every_position_leaves_every_score_unchanged(d, t, shift, start, interleaved, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, t, d, dtype=torch.float64, generator=gen).unbind(0)
    at = start + torch.randperm(t, generator=gen)  # any positions, then all moved by the same amount
    moved = at + shift
    before = positions.rope(q, at, interleaved=interleaved) @ positions.rope(k, at, interleaved=interleaved).T
    after = positions.rope(q, moved, interleaved=interleaved) @ positions.rope(k, moved, interleaved=interleaved).T
    assert_near(before, after)  # angles p * theta at p up to 600, in float64: float64's pair


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: positions.rope(torch.zeros(3, 5)), "even"),
        (lambda: positions.rope(torch.zeros(5)), "x"),
        (lambda: positions.rope(torch.zeros(3, 4), torch.tensor([0.5, 1.0, 2.0])), "positions"),
        (lambda: positions.rope(torch.zeros(3, 4), torch.tensor([0, 1])), "positions"),
        (lambda: positions.frequencies(4, base=1.0), "base"),
        (lambda: positions.alibi_slopes(0), "n_heads"),
    ],
)
def test_a_bad_argument_is_a_value_error_naming_it(call, named):
    with pytest.raises(ValueError, match=named):
        call()


def test_alibi_slopes_of_a_power_of_2_are_press_et_als_geometric_sequence():
    assert positions.alibi_slopes(8).tolist() == [2.0**-i for i in range(1, 9)]  # 1/2, 1/4, ..., 1/256 (the paper)
    assert positions.alibi_slopes(4).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]


def bloom_alibi(n_heads: int, t: int) -> torch.Tensor:
    """transformers' BLOOM bias (H, 1, T): +slope_h * j for key j, the same for every query row."""
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    return build_alibi_tensor(torch.ones(1, t, dtype=torch.long), n_heads, torch.float64)


@REFERENCE_GROUP
@pytest.mark.parametrize("n_heads", [1, 2, 3, 5, 6, 8, 12, 16, 20])
def test_alibi_equals_blooms_up_to_a_constant_per_row(n_heads):
    t = 7
    ours = positions.alibi_bias(n_heads, t)  # (H, T, T): -m |i - j|
    bloom = bloom_alibi(n_heads, t).expand(n_heads, t, t)  # +m j
    # BLOOM computes its slopes in float32: equal within float32's rounding
    assert torch.allclose(positions.alibi_slopes(n_heads), bloom[:, 0, 1], rtol=1e-6, atol=0)  # key 1: the slope
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    gap = (bloom - ours).masked_fill(~causal, float("nan"))  # where BLOOM's causal model reads it
    row_gap = gap.nanmean(dim=-1, keepdim=True)
    assert_near(gap[:, causal], (row_gap.expand_as(gap))[:, causal], (TOL_FLOAT32, RTOL_FLOAT32))  # one per row
    scores = torch.randn(n_heads, t, t, dtype=torch.float64, generator=torch.Generator().manual_seed(n_heads))
    blocked = torch.where(causal, 0.0, float("-inf"))
    ours_w, bloom_w = ((scores + b + blocked).softmax(-1) for b in (ours, bloom))
    assert torch.allclose(
        ours_w, bloom_w, atol=1e-6, rtol=0
    )  # weights in [0, 1]; the biases differ by float32 rounding


def test_alibi_bias_is_minus_slope_times_distance_also_for_rectangles():
    bias = positions.alibi_bias(3, 2, 5)
    slopes = positions.alibi_slopes(3)
    assert bias.shape == (3, 2, 5)
    assert bias[2, 1, 4].item() == pytest.approx(-slopes[2].item() * 3) and bias[0, 1, 1].item() == 0.0
    assert math.isclose(bias[1, 0, 4].item(), -4 * slopes[1].item())
