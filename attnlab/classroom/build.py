"""Build a presenter step's questions from a Playground state, the same ones for everyone with the same link.

The query row a question asks about, and the question ids, come from a digest of the settings
(text, sizes, seed, mask, positions, weights and edits) — never from Python's salted hash() or
a clock — so a class that opens one link answers one set of questions. The scaling question
runs the same sentence and seed once more at d_k = 512 to grade against.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnlab.attention import stable_softmax
from attnlab.classroom.questions import (
    ArgmaxQuestion,
    MaskQuestion,
    Question,
    RowSumQuestion,
    ScalingQuestion,
    ShapeQuestion,
)
from attnlab.limits import MAX_SCALING_DK as BIG_D_K
from attnlab.pipeline import LabConfig, LabResult, run_lab
from attnlab.stages import N_STEPS, NAMES, by_name, step

CLASSIC_FIELDS = 9  # text .. scaled: the settings before contract 13, whose digests links already carry


def state_digest(config: LabConfig) -> str:
    """A short hex digest of every setting: equal on every machine and process for equal settings.

    The classic settings are digested as before contract 13 (the mask as the causal switch it was), so an older
    link keeps its questions; the modern ones join the digest only when one of them is on.
    """
    classic = list(dataclasses.astuple(config)[:CLASSIC_FIELDS])
    classic[3] = config.mask_kind != "full"  # `causal`, read from the mask in force
    kind = config.mask_kind
    rule = {"window": (config.window,), "sinks": (config.window, config.sinks), "prefix": (config.prefix,)}
    modern = (config.n_kv_heads, config.rope, config.alibi, kind, *rule.get(kind, ()))
    fields = tuple(classic) + (modern if config.modern else ())
    return hashlib.blake2b(repr(fields).encode(), digest_size=8).hexdigest()


def pick_query(config: LabConfig, blocked: torch.Tensor) -> int:
    """The row a question asks about: drawn by the digest among rows that see at least two keys (if any)."""
    sees = (~blocked).sum(dim=-1)  # (T,)
    rows = [i for i in range(len(sees)) if sees[i] >= 2] or list(range(len(sees)))
    return rows[int(state_digest(config), 16) % len(rows)]


def mean_top_weight(masked: torch.Tensor) -> float:
    """Mean largest softmax weight over rows that see two or more keys (1.0 when no row does)."""
    _, weights = stable_softmax(masked)  # (T, T)
    rows = (~torch.isneginf(masked)).sum(dim=-1) >= 2
    return float(weights[rows].amax(dim=-1).mean()) if rows.any() else 1.0


def top_weights(result: LabResult, head: int) -> tuple[float, float]:
    """Mean top weight of one head with 1/sqrt(d_k) and without it, under the run's mask."""
    heads = result.steps.heads
    scores, bias = heads.scores[head], heads.bias[head]  # (T, T)
    d_k = result.steps.d_k
    return mean_top_weight(scores / math.sqrt(d_k) + bias), mean_top_weight(scores + bias)


def big_run(config: LabConfig) -> LabResult:
    """This sentence, seed, mask and positions with one head of width 512 and seeded random weights.

    Edits and the identity/zeros starts belong to the state's own width, so they do not carry over.
    """
    wide = dataclasses.replace(config, d_model=BIG_D_K, heads=1, kv_heads=None, init="random", edits=(), scaled=True)
    return run_lab(wide)


@dataclass(frozen=True)
class Asked:
    """What every question of one screen is about: the state, its run, the head and the query row."""

    config: LabConfig
    result: LabResult
    head: int  # 0-based
    row: int  # 0-based query row

    def uid(self, kind: type[Question]) -> str:
        """One question's id for the session score: the question, the state, the head and the row."""
        return f"{kind.qid}-{state_digest(self.config)}-h{self.head}-q{self.row}"


def _shape(a: Asked) -> Question:
    return ShapeQuestion(a.uid(ShapeQuestion), a.head, tuple(a.result.steps.q.shape))


def _scaling(a: Asked) -> Question:
    here, big = top_weights(a.result, a.head), top_weights(big_run(a.config), 0)
    return ScalingQuestion(a.uid(ScalingQuestion), a.head, a.result.steps.d_k, BIG_D_K, here, big)


def _mask(a: Asked) -> Question:
    return MaskQuestion(a.uid(MaskQuestion), a.head, a.result.steps.heads.blocked[a.head].numpy())


def _argmax(a: Asked) -> Question:
    heads = a.result.steps.heads
    masked, weights = heads.masked[a.head, a.row].numpy(), heads.weights[a.head, a.row].numpy()  # (T,)
    return ArgmaxQuestion(a.uid(ArgmaxQuestion), a.head, tuple(a.result.tokens), a.row, masked, weights)


def _row_sum(a: Asked) -> Question:
    heads = a.result.steps.heads
    weights, empty = heads.weights[a.head].numpy(), heads.empty_rows[a.head].numpy()  # (T, T), (T,)
    return RowSumQuestion(a.uid(RowSumQuestion), a.head, tuple(a.result.tokens), a.row, weights, empty)


BUILDERS: dict[type[Question], Callable[[Asked], Question]] = {
    ShapeQuestion: _shape,
    ScalingQuestion: _scaling,
    MaskQuestion: _mask,
    ArgmaxQuestion: _argmax,
    RowSumQuestion: _row_sum,
}
QUESTION_STAGES: dict[str, tuple[str, ...]] = {  # stage name -> the ids of the questions asked before it, in order
    name: qids for name in NAMES if (qids := tuple(kind.qid for kind in BUILDERS if kind.stage == name))
}
QUESTION_STEPS: dict[int, tuple[str, ...]] = {by_name(name).number: qids for name, qids in QUESTION_STAGES.items()}


def questions_for_step(
    number: int, config: LabConfig, result: LabResult, *, head: int = 0, query: int | None = None
) -> tuple[Question, ...]:
    """The questions of presenter step `number` (1..11): those of the stage it shows; none outside that range."""
    if not 1 <= number <= N_STEPS:
        return ()
    return questions_for_stage(step(number).name, config, result, head=head, query=query)


def questions_for_stage(
    name: str, config: LabConfig, result: LabResult, *, head: int = 0, query: int | None = None
) -> tuple[Question, ...]:
    """The questions asked before stage `name` (none for most stages, or for an empty sentence).

    `head` is 0-based (the presenter's "all heads" view asks about head 0); `query` overrides the
    row drawn from the digest (e.g. the row the Playground has outlined).
    """
    by_name(name)  # an unknown name is a bug, not a stage without questions
    if not result.tokens or name not in QUESTION_STAGES:
        return ()
    if not 0 <= head < result.steps.n_heads:
        raise ValueError(f"head must be 0..{result.steps.n_heads - 1}, got {head}")
    row = pick_query(config, result.steps.heads.blocked[head]) if query is None else query
    asked = Asked(config, result, head, row)
    return tuple(build(asked) for kind, build in BUILDERS.items() if kind.stage == name)
