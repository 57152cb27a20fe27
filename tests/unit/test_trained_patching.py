"""Head and path patching on the decoders (contract 12): the invariants, the corruptions and bad input."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attnlab.trained import SymbolError, load, patch_heads, patch_path
from attnlab.trained.model import hook_name
from attnlab.trained.patching import (
    gap,
    patch_all,
    path_map,
    period,
    redraw_first_period,
    repeat_positions,
    restored,
    runs,
    shuffle_first_period,
)

CLEAN = "k 3 x m q 7 k 3 x m q 7 k 3 x m q 7".split()
# A share is a gap of summed float64 log-probabilities of float32 logits, over that gap (here 5 to 30 nats). A batch of
# another shape runs another matmul kernel (MKL's, or another SIMD width), so the same row's logits differ by a few
# float32 ulps and a share by up to ~1e-7; a head's or a path's share differs from another's by 1e-2 and more.
TOL_SHARE = 1e-6


@pytest.fixture(scope="module")
def two():
    return load("induction-2l")


@pytest.fixture(scope="module", params=["redraw", "shuffle"])
def corrupt(request, two):
    make = redraw_first_period if request.param == "redraw" else shuffle_first_period
    return make(two, CLEAN, seed=3)


def test_period_and_the_positions_the_metric_reads():
    assert period(CLEAN) == 6 and repeat_positions(CLEAN) == list(range(6, 17))
    assert period(list("abcab")) == 3 and period(list("abcd")) is None and repeat_positions(list("abcd")) == []


def test_the_corruptions_change_only_the_first_period(two):
    red = redraw_first_period(two, CLEAN, seed=1)
    assert red[6:] == CLEAN[6:] and not set(red[:6]) & set(CLEAN) and len(set(red[:6])) == 6
    shuf = shuffle_first_period(two, CLEAN, seed=1)
    assert shuf[6:] == CLEAN[6:] and sorted(shuf[:6]) == sorted(CLEAN[:6]) and shuf[:6] != CLEAN[:6]
    follows = {(CLEAN[i], CLEAN[i + 1]) for i in range(6)}
    assert not follows & set(zip(shuf[:6], shuf[1:7], strict=True)), "no 'x then y' of the clean period survives"
    with pytest.raises(SymbolError, match="period"):
        redraw_first_period(two, list("abcd"))
    with pytest.raises(SymbolError, match="one symbol"):
        shuffle_first_period(two, list("aaaa"))


def test_patching_every_head_from_clean_restores_all_of_the_gap(two, corrupt):
    g = gap(two, CLEAN, corrupt)
    assert g.defined and g.clean > g.corrupt + 5
    assert patch_all(two, CLEAN, corrupt) == pytest.approx(1, abs=TOL_SHARE)


def test_patching_the_corrupt_runs_own_outputs_restores_nothing(two, corrupt):
    r = runs(two, CLEAN, corrupt)
    own = {hook_name(ly, hd, "out"): (lambda _x, o=r.out_corrupt[ly][:, hd]: o) for ly in range(2) for hd in range(4)}
    assert restored(two, r, own)[0] == pytest.approx(0, abs=TOL_SHARE)


def test_patch_heads_matches_one_head_at_a_time(two, corrupt):
    shares = patch_heads(two, CLEAN, corrupt)
    assert shares.shape == (2, 4) and np.isfinite(shares).all()
    for ly, hd in [(0, 3), (1, 2)]:
        assert shares[ly, hd] == pytest.approx(patch_all(two, CLEAN, corrupt, [(ly, hd)]), abs=TOL_SHARE)
    assert shares[1].max() > 0.3, "some layer-2 head carries the copy"


def test_the_same_input_twice_has_no_gap_and_no_share(two):
    assert not gap(two, CLEAN, CLEAN).defined
    assert np.isnan(patch_heads(two, CLEAN, CLEAN)).all()
    assert np.isnan(patch_path(two, CLEAN, CLEAN, (0, 0), (1, 0), "k"))


def test_path_map_matches_patch_path(two, corrupt):
    grid = path_map(two, CLEAN, corrupt, (1, 2))
    assert grid.shape == (4, 3)
    for s in range(4):
        for j, into in enumerate("qkv"):
            assert grid[s, j] == pytest.approx(patch_path(two, CLEAN, corrupt, (0, s), (1, 2), into), abs=TOL_SHARE)


def test_a_sender_with_no_path_restores_nothing(two, corrupt):
    """A sender whose rows of W_O are zero writes nothing to the stream: no path from it can bring anything back."""
    cut = copy.deepcopy(two)
    with torch.no_grad():
        cut.model.w_o[0][16:32] = 0  # head 1.2 writes nothing
    for into in "qkv":
        assert patch_path(cut, CLEAN, corrupt, (0, 1), (1, 0), into) == pytest.approx(0, abs=TOL_SHARE)


def test_input_errors_name_their_cause(two):
    with pytest.raises(SymbolError, match="same length"):
        patch_heads(two, CLEAN, CLEAN[:-1])
    with pytest.raises(SymbolError, match="unknown"):
        patch_heads(two, CLEAN, ["A"] + CLEAN[1:])
    with pytest.raises(SymbolError, match="same length"):
        patch_path(two, CLEAN, CLEAN[:-1], (0, 0), (1, 0), "k")
    with pytest.raises(ValueError, match="earlier layer"):
        patch_path(two, CLEAN, CLEAN, (1, 0), (1, 1), "k")
    with pytest.raises(ValueError, match="earlier layer"):
        patch_path(two, CLEAN, CLEAN, (1, 0), (0, 1), "q")
    with pytest.raises(ValueError, match="not a head"):
        patch_path(two, CLEAN, CLEAN, (0, 4), (1, 0), "q")
    with pytest.raises(ValueError, match="into"):
        patch_path(two, CLEAN, CLEAN, (0, 0), (1, 0), "x")
    with pytest.raises(ValueError, match="earlier layer"):
        patch_path(load("induction-1l"), CLEAN, CLEAN, (0, 0), (0, 1), "k")


def test_ablation_on_the_same_scale_matches_one_zeroed_run(two, corrupt):
    from attnlab.trained.patching import ablate_heads

    lost = ablate_heads(two, CLEAN, corrupt)
    g = gap(two, CLEAN, corrupt)
    run = two.run(CLEAN, ablate=((1, 2),))
    logp = np.log(run.probs[[i + 1 for i in g.positions], [two.vocab.index(CLEAN[i + 1]) for i in g.positions]])
    assert lost[1, 2] == pytest.approx((g.clean - logp.sum()) / g.size, abs=1e-4)
    assert np.isnan(ablate_heads(two, CLEAN, CLEAN)).all()
