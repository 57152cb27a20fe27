"""The eleven stages of multi-head attention, by name and in order: which matrix of a Playground run each is.

This is the one table of stages. Its names (`x`, `q`, `k`, `v`, `scores`, `scaled`, `masked`,
`weights`, `z`, `concat`, `output`) are the keys everywhere: the UI's drawing table
(`attnlab.ui.parts.stages.STAGES`) and its locale keys `stages.<name>`, the presenter's
questions, what-if comparisons, the offline pack's matrix names and the HTML export. Its order
is the presenter's: `step(k)` is the stage on screen at `/present?step=k`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch

from attnlab.pipeline import LabResult

Columns = Literal["dims", "keys", "head_dims"]


@dataclass(frozen=True)
class Step:
    """One stage: its number (1..11), stable name, where it lives in a LabResult and what its axes are."""

    number: int
    name: str
    per_head: bool  # True: a (H, T, ...) stack, one matrix per head
    columns: Columns  # model dimensions d0.., the key tokens, or one head's dimensions
    head_blocks: bool  # True: the d_model columns fall into one block per head (Q, K, V, Concat)
    kind: Literal["signed", "prob"]  # signed values or probabilities in [0, 1] (how to colour them)
    dims: tuple[str, ...]  # the shape in symbols, e.g. ("H", "T", "T")
    of: Callable[[LabResult], torch.Tensor]

    def matrix(self, result: LabResult) -> torch.Tensor:
        """This stage's tensor for a run: (T, d_model), or (H, T, T) / (H, T, d_k) per head."""
        return self.of(result)


STEPS: tuple[Step, ...] = (
    Step(1, "x", False, "dims", False, "signed", ("T", "d_model"), lambda r: r.x),
    Step(2, "q", False, "dims", True, "signed", ("T", "d_model"), lambda r: r.steps.q),
    Step(3, "k", False, "dims", True, "signed", ("T", "d_model"), lambda r: r.steps.k),  # H_kv·d_k if heads share
    Step(4, "v", False, "dims", True, "signed", ("T", "d_model"), lambda r: r.steps.v),
    Step(5, "scores", True, "keys", False, "signed", ("H", "T", "T"), lambda r: r.steps.heads.scores),
    Step(6, "scaled", True, "keys", False, "signed", ("H", "T", "T"), lambda r: r.steps.heads.scaled),
    Step(7, "masked", True, "keys", False, "signed", ("H", "T", "T"), lambda r: r.steps.heads.masked),
    Step(8, "weights", True, "keys", False, "prob", ("H", "T", "T"), lambda r: r.steps.heads.weights),
    Step(9, "z", True, "head_dims", False, "signed", ("H", "T", "d_k"), lambda r: r.steps.heads.output),
    Step(10, "concat", False, "dims", True, "signed", ("T", "H·d_k"), lambda r: r.steps.concat),
    Step(11, "output", False, "dims", False, "signed", ("T", "d_model"), lambda r: r.steps.output),
)
N_STEPS = len(STEPS)
NAMES: tuple[str, ...] = tuple(s.name for s in STEPS)
_BY_NAME: dict[str, Step] = {s.name: s for s in STEPS}


def step(number: int) -> Step:
    """Step `number` (1..11, as the presenter counts); ValueError outside that range."""
    if not 1 <= number <= N_STEPS:
        raise ValueError(f"step must be 1..{N_STEPS}, got {number}")
    return STEPS[number - 1]


def by_name(name: str) -> Step:
    """The stage called `name` (one of NAMES); KeyError naming the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no stage {name!r}; the stages are {NAMES}") from None


def dims_of(stage: Step, result: LabResult) -> tuple[str, ...]:
    """The stage's shape in symbols for this run: K and V are (T, H_kv·d_k) when query heads share them."""
    if stage.name in ("k", "v") and result.steps.n_kv_heads != result.steps.n_heads:
        return ("T", "H_kv·d_k")
    return stage.dims


def dim_names(n: int) -> list[str]:
    """Names of n feature columns: d0, d1, ... (the Playground's axis labels)."""
    return [f"d{i}" for i in range(n)]


def head_breaks(result: LabResult, stage: Step | None = None) -> list[int]:
    """The columns where a new head's block starts (none for one head): of d_model, or of the stage's own width
    (K and V hold only the key/value heads when query heads share them)."""
    d_k = result.steps.d_k
    width = result.weights.d_model if stage is None else stage.matrix(result).size(-1)
    return list(range(d_k, width, d_k))


def column_labels(stage: Step, result: LabResult) -> list[str]:
    """The column labels of one stage's matrix (of each head's matrix for a per-head stage)."""
    if stage.columns == "keys":
        return list(result.tokens)
    if stage.columns == "head_dims":
        return dim_names(result.steps.d_k)
    return dim_names(stage.matrix(result).size(-1))
