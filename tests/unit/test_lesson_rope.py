"""The RoPE lesson's numbers against references written here from the formulas, not from attnlab.positions.

The rotations are rebuilt as explicit 2 x 2 blocks in numpy (and as complex numbers for the interleaved pairs), the
frequencies are checked against the formula's worked numbers, and the decay against RoFormer's definition and the
summation-by-parts bound it comes from. Tolerances: 1e-12 in float64 where the same quantity is computed two ways.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lessons import rope as lesson
from attnlab.links import params
from attnlab.params import Invalid


def rotation(d: int, base: float, pos: int, interleaved: bool) -> np.ndarray:
    """(d, d): the block rotation RoPE applies at `pos`, built dimension by dimension from the formula."""
    r = np.eye(d)
    for i in range(d // 2):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + d // 2)
        angle = pos * base ** (-2.0 * i / d)
        r[a, a], r[a, b], r[b, a], r[b, b] = math.cos(angle), -math.sin(angle), math.sin(angle), math.cos(angle)
    return r


def scores_by_matrices(q: np.ndarray, k: np.ndarray, base: float, start: int, interleaved: bool) -> np.ndarray:
    """(T, T) scores with each row turned by its own rotation matrix at positions start..start+T-1."""
    n, d = q.shape
    rots = [rotation(d, base, start + p, interleaved) for p in range(n)]
    qr = np.stack([rots[p] @ q[p] for p in range(n)])
    kr = np.stack([rots[p] @ k[p] for p in range(n)])
    return qr @ kr.T / math.sqrt(d)


@settings(max_examples=15, deadline=None)
@given(
    d=st.integers(1, 12).map(lambda h: 2 * h),
    base=st.sampled_from([2.0, 100.0, 10000.0, 500000.0]),
    shift=st.integers(0, 5000),
    seed=st.integers(0, 50),
    interleaved=st.booleans(),
)
def test_a_shift_of_every_position_leaves_each_score_as_the_relative_rotation_gives_it(
    d, base, shift, seed, interleaved
):
    check = lesson.shift_check(d, base, seed, shift, interleaved, n=5)
    q, k = lesson.vectors(5, d, seed, 1).numpy(), lesson.vectors(5, d, seed, 2).numpy()
    np.testing.assert_allclose(check.before, scores_by_matrices(q, k, base, 0, interleaved), atol=1e-12)
    np.testing.assert_allclose(check.after, scores_by_matrices(q, k, base, shift, interleaved), atol=1e-9)
    relative = np.array([[q[m] @ rotation(d, base, n - m, interleaved) @ k[n] for n in range(5)] for m in range(5)])
    np.testing.assert_allclose(check.after, relative / math.sqrt(d), atol=1e-9)  # q_m . k_n sees only n - m
    assert check.max_diff < 1e-9
    assert check.permuted_diff < 1e-12  # the other pairing on reordered dimensions is this one


def test_the_two_pairings_disagree_on_the_same_q_and_k_and_agree_once_reordered():
    for interleaved in (False, True):
        check = lesson.shift_check(64, 10000.0, 0, 100, interleaved)
        q, k = lesson.vectors(8, 64, 0, 1).numpy(), lesson.vectors(8, 64, 0, 2).numpy()
        np.testing.assert_allclose(check.other, scores_by_matrices(q, k, 10000.0, 0, not interleaved), atol=1e-12)
        assert check.layouts_diff > 0.1
    order = lesson.half_order(6).tolist()
    assert order == [0, 2, 4, 1, 3, 5]  # pair (2i, 2i+1) -> (i, i + 3)


def test_interleaved_pairs_turn_as_complex_numbers_do():
    turn = lesson.pair_turn(16, 10000.0, 3, 40, 7, interleaved=True)
    q = lesson.vectors(1, 16, 7, 0)[0]
    z = torch.view_as_complex(q.reshape(8, 2).contiguous())[3]  # pair 3 as one complex number
    for p, point in zip(turn.positions, turn.trail, strict=True):
        turned = z * complex(math.cos(p * 10000.0 ** (-6 / 16)), math.sin(p * 10000.0 ** (-6 / 16)))
        assert point == pytest.approx([turned.real.item(), turned.imag.item()], abs=1e-12)
    assert turn.dims == (6, 7) and len(turn.trail) == 41


def test_a_pair_keeps_its_length_and_turns_by_theta_per_position():
    turn = lesson.pair_turn(64, 10000.0, 1, 100, 0, interleaved=False)
    assert turn.dims == (1, 33) and len(turn.trail) == lesson.N_TRAIL
    lengths = np.hypot(turn.trail[:, 0], turn.trail[:, 1])
    np.testing.assert_allclose(lengths, lengths[0], rtol=1e-12)
    steps = np.diff(np.unwrap(np.arctan2(turn.trail[:, 1], turn.trail[:, 0])))
    np.testing.assert_allclose(steps, 10**-0.125, rtol=1e-9)  # 10000^(-2/64) = 10^(-1/8)
    assert turn.angle == pytest.approx(100 * 10**-0.125) and turn.positions[-1] == 100
    with pytest.raises(ValueError, match="pair"):
        lesson.pair_turn(8, 10000.0, 4, 0, 0, False)


def test_frequencies_match_the_formulas_worked_numbers():
    f = lesson.pair_frequencies(128, 10000.0)
    assert f.theta[0] == 1.0 and f.wavelength[0] == pytest.approx(2 * math.pi)  # pair 0: 6.28 positions a turn
    assert f.theta[1] == pytest.approx(10 ** (-4 / 64), rel=1e-14)  # 10000^(-2/128)
    assert f.wavelength[63] == pytest.approx(2 * math.pi * 10 ** (4 * 126 / 128), rel=1e-12)  # about 54,410
    assert 54_000 < f.wavelength[63] < 2 * math.pi * 10000  # the slowest pair stays under 2*pi*base
    llama3 = lesson.pair_frequencies(128, 500000.0)
    assert llama3.theta[32] == pytest.approx(500000.0**-0.5, rel=1e-14)  # half-way: one over sqrt(base)
    assert np.all(np.diff(f.theta) < 0)  # every pair slower than the one before


def bound_by_definition(d: int, base: float, r: int) -> float:
    """(2/d) * sum_{j=1}^{d/2} |sum_{k=0}^{j-1} e^{i r theta_k}|, term by term (RoFormer 3.4.3)."""
    total, s = 0.0, 0j
    for k in range(d // 2):
        s += complex(math.cos(r * base ** (-2 * k / d)), math.sin(r * base ** (-2 * k / d)))
        total += abs(s)
    return total / (d / 2)


def test_the_decay_bound_is_roformers_definition_and_has_its_known_shape():
    r = np.array([0, 1, 7, 100, 1000])
    ours = lesson.relative_bound(128, 10000.0, r)
    assert ours == pytest.approx([bound_by_definition(128, 10000.0, int(x)) for x in r], rel=1e-12)
    found = lesson.decay(128, 10000.0, 512, 0, interleaved=False)  # every distance 0..512
    assert found.bound_at_0 == (128 / 2 + 1) / 2  # every S_j = j at r = 0
    assert found.bound[0] == 1.0 and np.all(found.bound <= 1.0 + 1e-12)  # |S_j| <= j at every distance
    near, far = found.bound[:4].mean(), found.bound[-256:].mean()
    assert near > 0.85 and far < 0.3  # it falls with distance (to about a fifth by a few hundred positions)


def test_a_vector_scored_against_itself_r_apart_is_the_mean_of_cosines_it_should_be():
    found = lesson.decay(32, 10000.0, 64, 3, interleaved=True)
    q = lesson.vectors(lesson.N_SAMPLES, 32, 3, 3).numpy()
    energy = q[:, 0::2] ** 2 + q[:, 1::2] ** 2  # (S, d/2): each pair's squared length
    theta = 10000.0 ** (-np.arange(0, 32, 2) / 32)
    expected = (energy @ np.cos(np.outer(theta, found.distances))).mean(0) / energy.sum(1).mean()
    np.testing.assert_allclose(found.same, expected, atol=1e-12)
    assert found.same[0] == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 16).map(lambda h: 2 * h), r=st.integers(0, 3000), seed=st.integers(0, 100))
def test_every_score_lies_under_roformers_bound(d, r, seed):
    q, k = lesson.vectors(2, d, seed, 5)
    at = torch.tensor([r])
    score = float(lesson.rope(q[None], at, interleaved=True)[0] @ k)  # query r positions after the key
    assert abs(score) <= lesson.abel_bound(q, k, 10000.0, r) + 1e-9


def test_a_long_distance_is_sampled_at_most_513_times_and_bad_arguments_are_named():
    assert len(lesson.distance_grid(131_072)) <= lesson.MAX_GRID and lesson.distance_grid(131_072)[-1] == 131_072
    assert lesson.distance_grid(20).tolist() == list(range(21))
    with pytest.raises(ValueError, match="max_dist"):
        lesson.distance_grid(0)
    with pytest.raises(ValueError, match="shift"):
        lesson.shift_check(8, 10000.0, 0, -1, False)


def test_the_lessons_link_replaces_an_odd_width_and_a_base_not_above_1():
    by_name = {p.name: p for p in params("lrope")}
    used, bad = by_name["d"].read("7")
    assert used == 8 and bad.reason == "odd"
    assert by_name["d"].read("255")[0] == 256 and by_name["d"].read("257")[0] == 256
    for raw in ("1", "0.5", "-3"):
        used, bad = by_name["base"].read(raw)
        assert used == 10000.0 and isinstance(bad, Invalid) and bad.reason == "not_above"
    assert by_name["base"].read("500000") == (500000.0, None)
    assert by_name["base"].read("1e12")[0] == 1e9 and by_name["base"].read("nan")[1].reason == "not_number"
