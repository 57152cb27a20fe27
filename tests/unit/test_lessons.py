"""The lessons' worked numbers, computed by attnlab.lessons from their inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lessons import dictionary, masking, positions, scaling
from attnlab.lessons.parse import dump_vector, parse_vector
from attnlab.params import Invalid, dump_float, float_param
from attnlab.tokens import positional_encoding
from attnlab.ui.app.registry import COURSE

SEED_TEXT = "<BOS> I like you <EOS>".split()


# --- soft dictionary -------------------------------------------------------------------------------


def test_hard_lookup_returns_exact_value_or_nothing():
    assert dictionary.hard_lookup("apple") == 10
    assert dictionary.hard_lookup("  Banana ") == 5
    assert dictionary.hard_lookup("fruit") is None


def test_fruit_weights_give_eight():
    r = dictionary.weighted_lookup((0.6, 0.4, 0.0), (10, 5, 2))
    assert r.terms == pytest.approx((6.0, 2.0, 0.0))
    assert r.total == pytest.approx(8.0, abs=1e-12)
    assert r.weight_sum == pytest.approx(1.0)


def test_soft_lookup_is_softmax_of_scaled_dot_products():
    q, keys, values = (1.0, 0.5), ((2.0, 1.0), (1.5, 1.5), (-1.0, 2.0)), (10, 5, 2)
    r = dictionary.soft_lookup(q, keys, values, temperature=1.0)
    logits = np.array([2.5, 2.25, 0.0]) / math.sqrt(2)
    expected = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(r.weights, expected, rtol=1e-12)
    assert r.value == pytest.approx(float(expected @ np.array(values)))


def test_temperature_to_zero_becomes_the_hard_lookup():
    q, keys, values = dictionary.QUERY_VECTOR, dictionary.KEY_VECTORS, dictionary.VALUES
    hard = dictionary.soft_lookup(q, keys, values, temperature=0.0)
    assert hard.weights.tolist() == [1.0, 0.0, 0.0] and hard.value == 10.0
    cold = dictionary.soft_lookup(q, keys, values, temperature=0.01)
    assert cold.weights[0] > 0.999 and cold.value == pytest.approx(10.0, abs=0.01)
    assert dictionary.soft_lookup(q, keys, values, 1.0).weights.max() < 0.6


def test_tie_at_temperature_zero_shares_weight():
    r = dictionary.soft_lookup((1.0, 1.0), ((1.0, 0.0), (0.0, 1.0)), (4.0, 8.0), 0.0)
    assert r.weights.tolist() == [0.5, 0.5] and r.value == 6.0


def test_key_width_must_match_query():
    with pytest.raises(ValueError):
        dictionary.soft_lookup((1.0, 2.0), ((1.0, 2.0, 3.0),), (1.0,), 1.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    st.lists(st.floats(-20, 20), min_size=3, max_size=3),
    st.floats(0.05, 5),
)
def test_soft_lookup_is_a_convex_combination(q3, values, temp):
    keys = ((2.0, 1.0, 0.0), (1.5, 1.5, 0.0), (-1.0, 2.0, 1.0))
    r = dictionary.soft_lookup(q3, keys, values, temp)
    assert r.weights.sum() == pytest.approx(1.0)
    assert min(values) - 1e-9 <= r.value <= max(values) + 1e-9


# --- parsing ---------------------------------------------------------------------------------------


@given(st.floats(0.0, 3.0) | st.sampled_from([5e-324, 1e-300, 1e-30]))
@settings(max_examples=200, deadline=None)
def test_every_allowed_temperature_gives_real_weights(temp):
    soft = dictionary.soft_lookup(dictionary.QUERY_VECTOR, dictionary.KEY_VECTORS, dictionary.VALUES, temp)
    assert np.isfinite(soft.weights).all() and soft.weights.sum() == pytest.approx(1.0)
    assert min(dictionary.VALUES) <= soft.value <= max(dictionary.VALUES)
    if 0 < temp < 1e-6:  # a tiny temperature is the hard limit: all weight on apple, the best match
        assert soft.weights[0] == 1.0


def test_parse_vector_and_float():
    assert parse_vector("1.5, 2 -0.5") == [1.5, 2.0, -0.5]
    assert parse_vector("1，2") == [1.0, 2.0]
    for bad, why in (("", "empty"), ("1, x", "not_number"), ("1, nan", "too_large"), ("1e9", "too_large")):
        with pytest.raises(ValueError, match=why):
            parse_vector(bad)
    assert dump_vector([1.5, 2.0]) == "1.5, 2" and dump_float(-0.0) == "0"
    assert float_param("w", 0.5, 0, 1).parse("0.25") == 0.25
    with pytest.raises(Invalid) as bad:
        float_param("w", 0.5, 0, 1).parse("7")
    assert bad.value.used == 1 and bad.value.reason == "out_of_range"
    with pytest.raises(Invalid) as bad:
        float_param("w", 0.5, 0, 1).parse("inf")
    assert bad.value.used == 0.5 and bad.value.reason == "not_number"


# --- why sqrt(d_k) ---------------------------------------------------------------------------------


def test_variance_of_dot_product_grows_like_d_k():
    curve = scaling.variance_curve(scaling.DK_GRID, n=4000, seed=0)
    for d, var, err, var_s in zip(curve.d_k, curve.var_raw, curve.std_err, curve.var_scaled, strict=True):
        assert abs(var - d) < 5 * err, (d, var, err)  # within sampling error
        assert abs(var_s - 1) < 5 * err / d
    slope = np.polyfit(np.log(curve.d_k), np.log(curve.var_raw), 1)[0]
    assert slope == pytest.approx(1.0, abs=0.05)


def test_unscaled_softmax_saturates_and_scaled_does_not():
    curves = scaling.saturation_curves([1, 512], n_keys=8)
    raw, scaled = curves["unscaled"], curves["scaled"]
    assert raw["max_weight"][1] > 0.9 and raw["entropy"][1] < 0.3 and raw["grad_norm"][1] < 0.1
    assert scaled["max_weight"][1] < 0.5 and scaled["entropy"][1] > 1.5 and scaled["grad_norm"][1] > 0.3
    assert raw["max_weight"][0] == pytest.approx(scaled["max_weight"][0])  # d_k = 1: sqrt(1) = 1


def test_softmax_jacobian_matches_autograd():
    z = torch.randn(5, dtype=torch.float64, requires_grad=True)
    jac = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), z)
    np.testing.assert_allclose(scaling.softmax_jacobian(torch.softmax(z, -1)).detach(), jac, atol=1e-12)


def test_jacobian_norm_without_the_jacobian():
    p = torch.softmax(torch.randn(7, 12, dtype=torch.float64) * 4, -1)
    direct = torch.linalg.matrix_norm(scaling.softmax_jacobian(p))
    np.testing.assert_allclose(scaling.jacobian_norm(p), direct, atol=1e-12)


def test_one_query_and_grid():
    assert scaling.dk_grid(100) == [1, 2, 4, 8, 16, 32, 64, 100, 128, 256, 512]
    a, b = scaling.one_query(64, 8, False, seed=3), scaling.one_query(64, 8, True, seed=3)
    np.testing.assert_allclose(a.logits / 8, b.logits)
    assert a.weights.max() >= b.weights.max()


# --- positions -------------------------------------------------------------------------------------


def test_exact_pe_values():
    pe = positions.pe_table(4, 8)
    assert pe[0].tolist() == [0.0, 1.0] * 4
    assert pe[1, 0] == pytest.approx(math.sin(1.0), abs=1e-15)
    assert pe[1, 1] == pytest.approx(math.cos(1.0), abs=1e-15)
    assert pe[2, 2] == pytest.approx(math.sin(2 / 10000 ** (2 / 8)), abs=1e-15)
    assert pe[3, 7] == pytest.approx(math.cos(3 / 10000 ** (6 / 8)), abs=1e-15)
    for p in range(4):
        for d in range(8):
            assert pe[p, d] == pytest.approx(positions.pe_value(p, d, 8), abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 64), st.integers(2, 32))
def test_pe_formula_matches_table_everywhere(n_pos, d_model):
    pe = positional_encoding(n_pos, d_model).numpy()
    p, d = n_pos - 1, d_model - 1
    assert pe[p, d] == pytest.approx(positions.pe_value(p, d, d_model), abs=1e-12)


def test_permutations_are_permutations():
    for kind in positions.PERMUTATIONS:
        order = positions.permutation(kind, 6, seed=1)
        assert sorted(order) == list(range(6)) and order != list(range(6))
    assert positions.permutation("reverse", 1) == [0]
    with pytest.raises(ValueError):
        positions.permutation("sideways", 3)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 8), st.sampled_from(positions.PERMUTATIONS), st.integers(0, 99))
def test_attention_is_permutation_equivariant_until_positions_are_added(t, kind, seed):
    tokens = [f"w{i}" for i in range(t)]
    order = positions.permutation(kind, t, seed)
    plain = positions.equivariance(tokens, 8, seed, order, positions=False)
    assert plain.max_diff < 1e-12
    np.testing.assert_allclose(plain.out_shuffled, plain.out[order], atol=1e-12)
    with_pe = positions.equivariance(tokens, 8, seed, order, positions=True)
    assert with_pe.max_diff > 1e-3


# --- masking ---------------------------------------------------------------------------------------


def test_causal_rows_see_their_prefix_and_one_pass_equals_step_by_step():
    assert masking.visible(SEED_TEXT)[2] == ["<BOS>", "I", "like"]
    check = masking.parallel_vs_sequential(SEED_TEXT)
    assert max(check.row_diff) < 1e-12
    assert torch.equal(check.weights > 0, torch.ones(5, 5, dtype=torch.bool).tril())


def test_minus_1e9_in_low_precision():
    assert masking.stored(-1e9, torch.float32) == -1e9  # exact in float32
    assert masking.stored(-1e9, torch.float16) == float("-inf")  # overflows: float16 tops out at 65504
    bf = masking.stored(-1e9, torch.bfloat16)
    assert bf == -998244352.0 and bf != -1e9  # bfloat16 keeps 8 bits of mantissa


def test_fill_table_computes_what_each_fill_does():
    table = {(r.dtype, r.fill): r for r in masking.fill_table(SEED_TEXT, "last")}
    assert len(table) == 9
    # float16 refuses -1e9 outright
    assert table["float16", "-1e9"].error and "overflow" in table["float16", "-1e9"].error
    for dtype in masking.DTYPES:
        inf = table[dtype, "-inf"]
        assert all(math.isnan(x) for x in inf.blank_row)  # naive softmax of an all -inf row: 0/0
        assert inf.sdpa_blank_row == [0.0] * 5  # SDPA: that row saw nothing, weights 0
        assert inf.leak == 0.0
        assert table[dtype, "min"].blank_row == pytest.approx([0.2] * 5, abs=1e-3)  # uniform: silently wrong
    assert table["float32", "-1e9"].blank_row == pytest.approx([0.2] * 5)
    assert table["bfloat16", "-1e9"].blank_row == pytest.approx([0.2] * 5, abs=1e-3)
    assert table["float32", "-inf"].allowed_err < 1e-6 < table["bfloat16", "-inf"].allowed_err


def test_no_blank_row_means_no_blank_results():
    r = masking.fill_result(masking.demo_scores(SEED_TEXT), masking.demo_mask(5, "none"), "float32", "-inf")
    assert r.blank_row is None and r.sdpa_blank_row is None
    assert masking.demo_mask(3, "first")[0].tolist() == [False] * 3


def test_sdpa_weights_readback_equals_softmax():
    s = torch.randn(4, 4, dtype=torch.float64)
    m = torch.ones(4, 4, dtype=torch.bool).tril()
    np.testing.assert_allclose(
        masking.sdpa_weights(s, m), torch.softmax(s.masked_fill(~m, float("-inf")), -1), atol=1e-12
    )


def test_course_order():
    assert [c.url_path for c in COURSE] == ["soft-dictionary", "scaling", "positions", "rope", "masking", "cost"]


def test_row_kind():
    assert masking.row_kind([math.nan] * 3) == ("nan", None)
    assert masking.row_kind([0.0, 0.0]) == ("zeros", 0.0)
    assert masking.row_kind([0.25] * 4) == ("uniform", 0.25)
    assert masking.row_kind([0.5, 0.25, 0.25])[0] == "other"
    assert masking.row_kind(None) == ("none", None)
