"""What-if: each stage difference equals that of two independent Playground runs; untouched stages are exact zeros."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.classroom.whatif import Change, compare, difference
from attnlab.limits import MAX_SEED
from attnlab.pipeline import LabConfig, run_lab
from attnlab.stages import STEPS

BASE = LabConfig(text="<BOS> I like you <EOS>", d_model=8, heads=2, seed=3)
EDITED = replace(BASE, edits=((("w_q", 0, 1), 2.5), (("w_v", 3, 3), -1.0)))
NAMES = [s.name for s in STEPS]


def expected_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b - a, written out: 0 where both are -inf, NaN where exactly one is."""
    out = np.empty_like(a)
    for index in np.ndindex(a.shape):
        x, y = a[index], b[index]
        if np.isneginf(x) and np.isneginf(y):
            out[index] = 0.0
        elif np.isneginf(x) or np.isneginf(y):
            out[index] = np.nan
        else:
            out[index] = y - x
    return out


def flip(config: LabConfig, kind: str) -> LabConfig:
    """The changed settings, spelled out independently of whatif.changed_config."""
    return {
        "causal": replace(config, causal=not config.causal),
        "scale": replace(config, scaled=not config.scaled),
        "positions": replace(config, positions=not config.positions),
        "seed": replace(config, seed=config.seed + 1),
        "reset_edits": replace(config, edits=()),
    }[kind]


@pytest.mark.parametrize("config", [BASE, replace(EDITED, causal=True, positions=True), replace(BASE, heads=1)])
@pytest.mark.parametrize("kind", ["causal", "scale", "positions", "seed", "reset_edits"])
def test_differences_are_those_of_two_playground_runs(config, kind):
    what = compare(config, Change(kind))
    a, b = run_lab(config), run_lab(flip(config, kind))
    assert what.changed_config == flip(config, kind)
    assert [d.step.name for d in what.stages] == NAMES
    for diff, stage in zip(what.stages, STEPS, strict=True):
        base, changed = stage.matrix(a).numpy(), stage.matrix(b).numpy()
        np.testing.assert_array_equal(diff.base, base)
        np.testing.assert_array_equal(diff.changed, changed)
        np.testing.assert_array_equal(diff.diff, expected_difference(base, changed))  # NaN matches NaN
        np.testing.assert_array_equal(diff.one_blocked, np.isneginf(base) ^ np.isneginf(changed))


def untouched(config: LabConfig, kind: str) -> list[str]:
    return [d.step.name for d in compare(config, Change(kind)).stages if d.unchanged]


def test_the_causal_mask_leaves_everything_before_it_alone():
    assert untouched(BASE, "causal") == ["x", "q", "k", "v", "scores", "scaled"]
    masked = compare(BASE, Change("causal")).stages[6]
    t = len(run_lab(BASE).tokens)
    assert masked.one_blocked.sum() == BASE.heads * t * (t - 1) // 2  # the cells above each diagonal
    assert np.isnan(masked.diff[masked.one_blocked]).all() and masked.max_abs == 0.0


def test_dropping_the_scale_changes_nothing_before_the_scaling():
    assert untouched(BASE, "scale") == ["x", "q", "k", "v", "scores"]


def test_without_the_scale_every_head_equals_sdpa_with_scale_one():
    for causal in (False, True):
        heads = compare(replace(BASE, causal=causal), Change("scale")).changed.steps.heads
        sdpa = F.scaled_dot_product_attention(heads.q, heads.k, heads.v, is_causal=causal, scale=1.0)
        assert heads.scale == 1.0 and torch.allclose(heads.output, sdpa, atol=1e-12)


def test_positions_and_seed_reach_every_stage():
    assert untouched(BASE, "positions") == []
    assert untouched(BASE, "seed") == []


def test_reset_edits_is_the_run_without_edits():
    what = compare(EDITED, Change("reset_edits"))
    plain = run_lab(replace(EDITED, edits=()))
    for diff, stage in zip(what.stages, STEPS, strict=True):
        np.testing.assert_array_equal(diff.changed, stage.matrix(plain).numpy())
    assert untouched(EDITED, "reset_edits") == ["x", "k"]  # only W_Q and W_V were edited
    assert all(d.unchanged for d in compare(BASE, Change("reset_edits")).stages)  # nothing to reset


def test_another_seed_is_the_next_one_or_the_one_given():
    assert compare(BASE, Change("seed")).changed_config.seed == BASE.seed + 1
    assert compare(BASE, Change("seed", seed=42)).changed_config.seed == 42
    assert compare(replace(BASE, seed=MAX_SEED), Change("seed")).changed_config.seed == 0


def test_difference_of_blocked_cells():
    inf = float("-inf")
    base = np.array([[1.0, inf, inf], [2.0, 3.0, inf]])
    changed = np.array([[1.5, inf, 0.0], [2.0, inf, inf]])
    diff, one = difference(base, changed)
    np.testing.assert_array_equal(diff, [[0.5, 0.0, np.nan], [0.0, np.nan, 0.0]])
    np.testing.assert_array_equal(one, [[False, False, True], [False, True, False]])


def test_an_unknown_change_is_refused():
    with pytest.raises(ValueError):
        compare(BASE, Change("temperature"))  # type: ignore[arg-type]
