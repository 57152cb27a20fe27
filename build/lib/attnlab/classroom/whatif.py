"""What-if: a Playground run beside the same run with one thing changed, every stage paired with its difference.

The difference is `changed - base`, cell by cell. Masked scores hold -inf, and -inf - -inf is
NaN, so a cell blocked in both runs counts as no change (0) and a cell blocked in only one run
is NaN in `diff` and True in `one_blocked`: the mask itself changed there, which no finite
number describes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from attnlab.limits import MAX_SEED
from attnlab.pipeline import LabConfig, LabResult, run_lab
from attnlab.stages import STEPS, Step

ChangeKind = Literal["causal", "scale", "positions", "seed", "reset_edits"]
CHANGES: tuple[ChangeKind, ...] = ("causal", "scale", "positions", "seed", "reset_edits")


@dataclass(frozen=True)
class Change:
    """One thing to flip: the causal mask, the 1/sqrt(d_k) scale, positions, the seed, or the edited cells."""

    kind: ChangeKind
    seed: int | None = None  # for kind "seed": the other seed; None = the next one (wrapping past MAX_SEED)


def changed_config(config: LabConfig, change: Change) -> LabConfig:
    """The settings with the one change applied (toggles flip whatever the state has now)."""
    if change.kind == "causal":
        return replace(config, causal=not config.causal)
    if change.kind == "scale":
        return replace(config, scaled=not config.scaled)
    if change.kind == "positions":
        return replace(config, positions=not config.positions)
    if change.kind == "seed":
        seed = (config.seed + 1) % (MAX_SEED + 1) if change.seed is None else change.seed
        return replace(config, seed=seed)
    if change.kind == "reset_edits":
        return replace(config, edits=())
    raise ValueError(f"unknown change {change.kind!r}; expected one of {CHANGES}")


def difference(base: np.ndarray, changed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`changed - base` with 0 where both are -inf and NaN where only one is; and where only one is."""
    base_blocked, changed_blocked = np.isneginf(base), np.isneginf(changed)
    one_blocked = base_blocked ^ changed_blocked
    with np.errstate(invalid="ignore"):
        diff = changed - base
    diff[base_blocked & changed_blocked] = 0.0
    diff[one_blocked] = np.nan
    return diff, one_blocked


@dataclass(frozen=True)
class StageDiff:
    """One stage of both runs and their difference (shapes as in `Step.dims`)."""

    step: Step
    base: np.ndarray
    changed: np.ndarray
    diff: np.ndarray  # changed - base; 0 where both are -inf, NaN where exactly one is
    one_blocked: np.ndarray  # bool: cells the mask blocks in one run only

    @property
    def unchanged(self) -> bool:
        """True when the change did not touch this stage at all (exact zeros, no mask change)."""
        return not self.one_blocked.any() and not np.any(self.diff)

    @property
    def max_abs(self) -> float:
        """Largest finite |difference| (0.0 when there is none)."""
        finite = np.abs(self.diff[np.isfinite(self.diff)])
        return float(finite.max()) if finite.size else 0.0


@dataclass(frozen=True)
class WhatIf:
    """Both configurations, both runs and the 11 stage differences in step order."""

    change: Change
    base_config: LabConfig
    changed_config: LabConfig
    base: LabResult
    changed: LabResult
    stages: tuple[StageDiff, ...]


def stage_diffs(base: LabResult, changed: LabResult) -> tuple[StageDiff, ...]:
    """Every stage of two runs of the same sentence, paired and subtracted."""
    pairs = []
    for stage in STEPS:
        a, b = stage.matrix(base).numpy(), stage.matrix(changed).numpy()
        pairs.append(StageDiff(stage, a, b, *difference(a, b)))
    return tuple(pairs)


def compare(config: LabConfig, change: Change) -> WhatIf:
    """Run the state and the state with `change`, and set every stage side by side."""
    other = changed_config(config, change)
    base, changed = run_lab(config), run_lab(other)
    return WhatIf(change, config, other, base, changed, stage_diffs(base, changed))
