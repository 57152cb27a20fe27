"""The predict-then-reveal question kinds and how each grades an answer against the numbers it was built from.

Nothing is a stored answer: a question holds the numbers of the run it was built from
(`attnlab.classroom.build` makes them from a Playground state) and `grade` parses the
student's text and compares. Every verdict says why, as a locale key under
`present.question.<qid>.` plus the fields that fill it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from attnlab.classroom.answers import (
    AnswerError,
    MaskAnswer,
    normalize,
    parse_choice,
    parse_mask_cells,
    parse_numbers,
    parse_shape,
    parse_token,
)
from attnlab.limits import TOL_ANSWER_ROW_SUM, TOL_ANSWER_SPREAD, TOL_ANSWER_TIE

PREFIX = "present.question."
MASK_GRID_MAX_T = 8  # up to this many tokens the mask question asks for the cells (a T x T grid); past it, a count
CHOICES = ("peaked", "flatter", "unchanged")
MAX_TERMS = 8
DECIMAL_COMMA = re.compile(r"-?\d*,\d+")  # 0,5 written with a decimal comma


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer: right or not, the computed answer, the parsed one, and why (locale key + fields)."""

    correct: bool
    expected: Any
    given: Any
    why: str
    fields: dict[str, str]


@dataclass(frozen=True)
class Question:
    """A question about one head of one Playground state; `uid` is the same for everyone with the same link."""

    qid: ClassVar[str]
    stage: ClassVar[str]  # the stage it is asked before (a name of attnlab.stages.NAMES)
    uid: str
    head: int  # 0-based; the UI says head + 1

    @property
    def prompt_key(self) -> str:
        """Locale key of the question itself."""
        return f"{PREFIX}{self.qid}.prompt"

    @property
    def hint_key(self) -> str:
        """Locale key of the line that says which answer form is expected."""
        return f"{PREFIX}{self.qid}.hint"

    @property
    def prompt_fields(self) -> dict[str, str]:
        """Values for the prompt's and the hint's {fields}."""
        return {"head": str(self.head + 1)}

    def _grade(self, correct: bool, expected: Any, parsed: Any, why: str, **fields: Any) -> Grade:
        """A Grade whose explanation key lives under this question's locale table."""
        return Grade(correct, expected, parsed, f"{PREFIX}{self.qid}.{why}", {k: str(v) for k, v in fields.items()})


def fmt(x: float) -> str:
    """A score or weight as the explanations write it: two decimals, a true minus sign, −∞ for a blocked cell."""
    return "−∞" if np.isneginf(x) else f"{x:.2f}".replace("-", "−")


def quoted_tokens(tokens: list[str], positions: list[int]) -> str:
    """Several tokens for one field: 'you' / 'me'."""
    return " / ".join(tokens[i] for i in positions)


def positions_text(positions: list[int]) -> str:
    """Positions counted from 1, as the UI counts them."""
    return ", ".join(str(i + 1) for i in positions)


@dataclass(frozen=True)
class ShapeQuestion(Question):
    """Step 2: the shape of Q = X W_Q for this sentence."""

    qid: ClassVar[str] = "q_shape"
    stage: ClassVar[str] = "q"
    shape: tuple[int, ...]  # result.steps.q.shape: (T, d_model)

    @property
    def prompt_fields(self) -> dict[str, str]:
        """W_Q's width is on screen; the token count is the student's to work out."""
        return {**super().prompt_fields, "d_model": str(self.shape[-1])}

    def grade(self, raw: str) -> Grade:
        """Right for (T, d_model) (also with a leading batch of 1); name a swap of rows and columns."""
        dims = parse_shape(raw)
        t, d_model = self.shape
        fields = dict(t=t, d_model=d_model, given=" × ".join(map(str, dims)))
        if dims == self.shape:
            return self._grade(True, self.shape, dims, "right", **fields)
        if dims == (1, *self.shape):
            return self._grade(True, self.shape, dims, "right_batch", **fields)
        why = "wrong_transposed" if dims == self.shape[::-1] else "wrong"
        return self._grade(False, self.shape, dims, why, **fields)


@dataclass(frozen=True)
class ArgmaxQuestion(Question):
    """Step 8: which key the chosen query row will weigh most after softmax."""

    qid: ClassVar[str] = "argmax"
    stage: ClassVar[str] = "weights"
    tokens: tuple[str, ...]
    query: int  # 0-based row
    masked: np.ndarray  # (T,) what softmax sees in that row: scaled scores, -inf where blocked
    weights: np.ndarray  # (T,) the row after softmax

    @property
    def prompt_fields(self) -> dict[str, str]:
        """The head and the query row the question is about."""
        return {**super().prompt_fields, "query": self.tokens[self.query], "row": str(self.query + 1)}

    @property
    def top(self) -> list[int]:
        """Every key that shares the largest weight (ties: equal tokens, zero weights); any of them is right."""
        best = self.weights.max()
        return [j for j in range(len(self.weights)) if self.weights[j] >= best * (1 - TOL_ANSWER_TIE)]

    def grade(self, raw: str) -> Grade:
        """Right when a named key shares the top weight; say the row's largest score and its weight either way."""
        pick = parse_token(raw, list(self.tokens))
        named = sorted(pick.positions, key=lambda j: -self.weights[j])
        top, tokens, j = self.top, list(self.tokens), named[0]
        fields = dict(
            query=tokens[self.query],
            row=self.query + 1,
            head=self.head + 1,
            key=quoted_tokens(tokens, top),
            key_pos=positions_text(top),
            score=fmt(self.masked[top[0]]),
            weight=fmt(self.weights[top[0]]),
            given=tokens[j],
            given_pos=j + 1,
            given_score=fmt(self.masked[j]),
            given_weight=fmt(self.weights[j]),
        )
        correct = bool(set(named) & set(top))
        if correct:
            why = "right" if len(top) == 1 else "right_tie"
        else:
            why = "wrong_blocked" if np.isneginf(self.masked[named]).all() else "wrong"
        return self._grade(correct, frozenset(top), pick.positions, why, **fields)


@dataclass(frozen=True)
class MaskQuestion(Question):
    """Step 7: which cells the mask sets to -inf (as cells for a small T, as a count for a large one)."""

    qid: ClassVar[str] = "mask"
    stage: ClassVar[str] = "masked"
    blocked: np.ndarray  # (T, T) bool, True where query i may not see key j

    @property
    def t(self) -> int:
        """Number of tokens (rows and columns of the mask)."""
        return self.blocked.shape[0]

    @property
    def form(self) -> str:
        """'cells' (a grid or typed pairs) when T <= MASK_GRID_MAX_T, else 'count'."""
        return "cells" if self.t <= MASK_GRID_MAX_T else "count"

    @property
    def prompt_key(self) -> str:
        """The prompt differs by form: tick the cells, or count them."""
        return f"{PREFIX}{self.qid}.prompt_{self.form}"

    @property
    def hint_key(self) -> str:
        """The expected-form line differs by form too."""
        return f"{PREFIX}{self.qid}.hint_{self.form}"

    @property
    def prompt_fields(self) -> dict[str, str]:
        """The number of tokens and of cells."""
        return {**super().prompt_fields, "t": str(self.t), "cells": str(self.t * self.t)}

    @property
    def expected(self) -> frozenset[tuple[int, int]]:
        """The blocked (query, key) cells, 0-based."""
        return frozenset((int(i), int(j)) for i, j in zip(*np.nonzero(self.blocked), strict=True))

    def grade(self, raw: str) -> Grade:
        """Grade typed text: 'none', a count (count form only) or 1-based row,column pairs."""
        return self.judge(parse_mask_cells(raw, self.t, count_ok=self.form == "count"))

    def grade_cells(self, cells: set[tuple[int, int]] | frozenset[tuple[int, int]]) -> Grade:
        """Grade the cells ticked in a T x T grid (0-based (query, key) pairs)."""
        return self.judge(MaskAnswer(frozenset(cells), len(cells)))

    def judge(self, answer: MaskAnswer) -> Grade:
        """Compare with the mask: the exact set of cells, or for a count just how many."""
        expected, n = self.expected, len(self.expected)
        given = answer.count if answer.cells is None else answer.cells
        fields = dict(t=self.t, tm1=self.t - 1, n=n, given_n=answer.count)
        if answer.cells is None:
            correct = answer.count == n
            why = ("right" if correct else "wrong") + ("_none" if n == 0 else "_count")
            return self._grade(correct, n, given, why, **fields)
        if answer.cells == expected:
            return self._grade(True, expected, given, "right_none" if n == 0 else "right", **fields)
        missed, extra = len(expected - answer.cells), len(answer.cells - expected)
        fields.update(missed=missed, extra=extra)
        return self._grade(False, expected, given, self._mistake(answer.cells), **fields)

    def _mistake(self, cells: frozenset[tuple[int, int]]) -> str:
        """Name the usual misreadings: blocking when nothing is, the diagonal, or the past instead of the future."""
        if not self.expected:
            return "wrong_none"
        if any(i == j for i, j in cells):
            return "wrong_diagonal"
        if cells == frozenset((j, i) for i, j in self.expected):
            return "wrong_transposed"
        return "wrong"


@dataclass(frozen=True)
class RowSumQuestion(Question):
    """Step 8: what each row of the weights adds up to (1 for a row that sees keys, 0 for one that sees none)."""

    qid: ClassVar[str] = "row_sum"
    stage: ClassVar[str] = "weights"
    tokens: tuple[str, ...]
    query: int  # the row written out in the explanation
    weights: np.ndarray  # (T, T) after softmax
    empty: np.ndarray  # (T,) bool: rows that see no key

    @property
    def sums(self) -> np.ndarray:
        """Each row's total, computed from the weights."""
        return self.weights.sum(axis=-1)

    def read(self, raw: str) -> list[float]:
        """The numbers typed; a lone `0,5` is the decimal 0.5 where two numbers cannot be an answer (T != 2)."""
        given = parse_numbers(raw)
        if len(given) not in (1, len(self.weights)) and DECIMAL_COMMA.fullmatch(normalize(raw)):
            return [float(normalize(raw).replace(",", "."))]
        return given

    def grade(self, raw: str) -> Grade:
        """One number for every row that sees a key, or one number per row; within TOL_ANSWER_ROW_SUM of the totals."""
        given = self.read(raw)
        sums = self.sums
        if len(given) == 1:
            correct = bool((~self.empty).any() and np.all(np.abs(sums[~self.empty] - given[0]) <= TOL_ANSWER_ROW_SUM))
        elif len(given) == len(sums):
            correct = bool(np.all(np.abs(sums - np.array(given)) <= TOL_ANSWER_ROW_SUM))
        else:
            raise AnswerError("numbers_count", raw, t=len(sums))
        row = self.weights[self.query]
        seen = [f"{w:.2f}" for w in row[row > 0][:MAX_TERMS]] + (["…"] if (row > 0).sum() > MAX_TERMS else [])
        fields = dict(
            query=self.tokens[self.query],
            row=self.query + 1,
            terms=" + ".join(seen),
            total=f"{sums[self.query]:.3f}",
            given=", ".join(f"{g:g}" for g in given),
            empty=int(self.empty.sum()),
        )
        why = ("right" if correct else "wrong") + ("_empty" if self.empty.any() else "")
        return self._grade(correct, tuple(sums.tolist()), tuple(given), why, **fields)


def spread_change(top_scaled: float, top_unscaled: float) -> str:
    """'peaked' when dropping the scale raises the mean top weight, 'flatter' when it lowers it, else 'unchanged'."""
    if abs(top_unscaled - top_scaled) <= TOL_ANSWER_SPREAD:
        return "unchanged"
    return "peaked" if top_unscaled > top_scaled else "flatter"


@dataclass(frozen=True)
class ScalingQuestion(Question):
    """Step 6: what softmax does without 1/sqrt(d_k) when d_k is large (multiple choice)."""

    qid: ClassVar[str] = "scaling"
    stage: ClassVar[str] = "scaled"
    choices: ClassVar[tuple[str, ...]] = CHOICES  # locale keys present.question.scaling.choice_<id>
    d_k: int  # this state's head width
    big_d_k: int
    here: tuple[float, float]  # mean top weight of this head's rows: with 1/sqrt(d_k), without
    big: tuple[float, float]  # the same for this sentence and seed at d_k = big_d_k

    @property
    def prompt_fields(self) -> dict[str, str]:
        """The large d_k the question imagines."""
        return {**super().prompt_fields, "big": str(self.big_d_k)}

    @property
    def expected(self) -> str:
        """The computed change at the large d_k."""
        return spread_change(*self.big)

    def grade(self, raw: str) -> Grade:
        """Right when the choice matches what the two softmaxes at the large d_k did."""
        choice = parse_choice(raw, CHOICES)
        correct = choice == self.expected
        fields = dict(
            big=self.big_d_k,
            sqrt_big=f"{math.sqrt(self.big_d_k):.1f}",
            big_scaled=fmt(self.big[0]),
            big_unscaled=fmt(self.big[1]),
            d_k=self.d_k,
            here_scaled=fmt(self.here[0]),
            here_unscaled=fmt(self.here[1]),
        )
        why = f"{'right' if correct else 'wrong'}_{self.expected}"
        return self._grade(correct, self.expected, choice, why, **fields)
