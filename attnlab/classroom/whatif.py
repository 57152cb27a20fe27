"""What-if: a Playground run beside the same run with one thing changed, every stage paired with its difference.

The difference is `changed - base`, cell by cell. Masked scores hold -inf, and -inf - -inf is
NaN, so a cell blocked in both runs counts as no change (0) and a cell blocked in only one run
is NaN in `diff` and True in `one_blocked`: the mask itself changed there, which no finite
number describes. Fewer key/value heads make K and V narrower: such a stage has no cell-by-cell
difference (`comparable` is False, `diff` all NaN), and `padded` sets both runs side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from attnlab.limits import MAX_SEED
from attnlab.params import divisors
from attnlab.pipeline import CAUSAL_MASKS, LabConfig, LabResult, run_lab
from attnlab.stages import STEPS, Step

ChangeKind = Literal["causal", "scale", "positions", "seed", "reset_edits", "rope", "kv_heads", "window"]
CHANGES: tuple[ChangeKind, ...] = ("causal", "scale", "positions", "seed", "reset_edits", "rope", "kv_heads", "window")


@dataclass(frozen=True)
class Change:
    """One thing to flip: the causal mask, the 1/sqrt(d_k) scale, positions, the seed, the edited cells, RoPE
    (rotate-half on, or off), fewer key/value heads (the next divisor of heads below; from one, one per head),
    or a sliding window (on, with the state's window; from a window, the causal mask)."""

    kind: ChangeKind
    seed: int | None = None  # for kind "seed": the other seed; None = the next one (wrapping past MAX_SEED)


def changed_config(config: LabConfig, change: Change) -> LabConfig:
    """The settings with the one change applied (toggles flip whatever the state has now)."""
    if change.kind == "causal" and config.mask is None:  # the classic switch
        return replace(config, causal=not config.causal)
    if change.kind == "causal":  # the causal mask on (from a rule that shows later keys) or off (to none)
        causal = config.mask_kind not in CAUSAL_MASKS
        return replace(config, causal=causal, mask="causal" if causal else "full")
    if change.kind == "rope":
        return replace(config, rope="half" if config.rope == "none" else "none")
    if change.kind == "kv_heads":
        fewer = [n for n in divisors(config.heads) if n < config.n_kv_heads]
        return replace(config, kv_heads=fewer[-1] if fewer else config.heads)
    if change.kind == "window":
        window = config.mask_kind != "window"
        return replace(config, causal=True, mask="window" if window else "causal")
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
    def comparable(self) -> bool:
        """False when the two runs' matrices differ in shape (K and V with fewer key/value heads)."""
        return self.base.shape == self.changed.shape

    @property
    def unchanged(self) -> bool:
        """True when the change did not touch this stage at all (exact zeros, no mask change)."""
        return self.comparable and not self.one_blocked.any() and not np.any(self.diff)

    def padded(self) -> tuple[np.ndarray, np.ndarray]:
        """Both runs' matrices at the wider one's shape, NaN (an empty cell) where the narrower one has none."""
        shape = tuple(max(a, b) for a, b in zip(self.base.shape, self.changed.shape, strict=True))
        out = []
        for m in (self.base, self.changed):
            wide = np.full(shape, np.nan)
            wide[tuple(slice(0, n) for n in m.shape)] = m
            out.append(wide)
        return out[0], out[1]

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
        if a.shape == b.shape:
            pairs.append(StageDiff(stage, a, b, *difference(a, b)))
        else:  # K or V with another number of key/value heads: no cell-by-cell difference
            pairs.append(StageDiff(stage, a, b, np.full(a.shape, np.nan), np.zeros(a.shape, dtype=bool)))
    return tuple(pairs)


def compare(config: LabConfig, change: Change) -> WhatIf:
    """Run the state and the state with `change`, and set every stage side by side."""
    other = changed_config(config, change)
    base, changed = run_lab(config), run_lab(other)
    return WhatIf(change, config, other, base, changed, stage_diffs(base, changed))
