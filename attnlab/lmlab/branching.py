"""Sampling as people meet it: one prefix continued at three temperatures side by side, where the rows part, and the
alternatives at any character.

The prefix is the page's text and the branch (characters the student chose to go on from, kept in the link).
`room` says how many characters fit after it in the model's length: a branch is never cut from the front, so a
prefix past the length is refused by the page, not silently shortened. `parted` marks, for each pair of rows, the
first place they differ (in both rows): the characters where the rows part. `alternatives` are the likeliest
characters of the distribution a step was drawn from (after temperature, top-k and top-p), with the greedy choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.lm import Generation, Step

BRANCH_CHARS = 32  # characters each row adds
ALTERNATIVES = 5  # characters offered at a picked step


@dataclass(frozen=True)
class Branching:
    """The rows (one Generation per temperature) after one prefix, and where they part."""

    prefix: str
    temperatures: tuple[float, ...]
    rows: list[Generation]
    parted: np.ndarray  # (R, n) bool: a character at which this row first differs from some other row

    @property
    def n(self) -> int:
        return len(self.rows[0].steps) if self.rows else 0


def room(lm, text: str, branch: str) -> int:
    """Tokens the model's length leaves after text + branch (0 or less: no room)."""
    return lm.max_len - len(lm.encode(text + branch))


def parted(rows: list[list[int]]) -> np.ndarray:
    """(R, n) bool: for every pair of rows, the first index where they differ, marked in both."""
    n = min((len(r) for r in rows), default=0)
    out = np.zeros((len(rows), n), dtype=bool)
    for a in range(len(rows)):
        for b in range(a + 1, len(rows)):
            differ = [i for i in range(n) if rows[a][i] != rows[b][i]]
            if differ:
                out[a, differ[0]] = out[b, differ[0]] = True
    return out


def branch(
    lm, text: str, forced: str, temperatures: tuple[float, ...], seed: int, top_k: int | None, top_p: float | None
) -> Branching:
    """text + forced continued by up to BRANCH_CHARS characters at each temperature (fewer when the model's length
    leaves fewer); ValueError when it leaves none."""
    n = min(BRANCH_CHARS, room(lm, text, forced))
    if n < 1:
        raise ValueError(f"no room after {len(text + forced)} characters in the model's {lm.max_len}")
    rows = lm.branches(text + forced, n, list(temperatures), seed, top_k, top_p)
    marks = parted([[s.token_id for s in row.steps] for row in rows])
    return Branching(text + forced, tuple(temperatures), rows, marks)


def alternatives(lm, step: Step, k: int = ALTERNATIVES) -> list[tuple[str, float]]:
    """The k likeliest tokens of the distribution a step was drawn from (only those it could draw), likeliest first."""
    probs = step.probs
    order = np.argsort(-probs, kind="stable")[:k]
    return [(lm.token(int(i)), float(probs[i])) for i in order if probs[i] > 0]
