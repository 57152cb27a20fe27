"""Sampling as people meet it: one prefix at three temperatures side by side, where they part, the alternatives.

The prefix is the page's text and the branch (characters the student chose to go on from, kept in the link).
`room` says how many characters fit after it in the model's length: a branch is never cut from the front, so a
prefix past the length is refused by the page, not silently shortened. `parted` marks, for each pair of rows, the
first place they differ (in both rows): the characters where the rows part. `alternatives` are the model's own
likeliest next characters after a prefix (temperature 1, no cut: what the model thought, whatever a sampler kept).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnlab.lm import Generation

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


@torch.no_grad()
def alternatives(lm, prefix: str, k: int = ALTERNATIVES) -> list[tuple[int, str, float]]:
    """The k likeliest tokens the model gives after `prefix` (never <bos> or <unk>), likeliest first: each id, its
    text and its probability (temperature 1, no cut). A step's `probs` says what its sampler gave each."""
    ids = lm.prepare(prefix, keep="end").ids
    z = lm.forward(torch.tensor([ids])).logits[0, -1].double()
    z[lm.vocab.banned()] = float("-inf")
    probs = torch.softmax(z, -1)
    top = torch.topk(probs, min(k, int((probs > 0).sum())))
    return [(i, lm.token(i), float(p)) for i, p in zip(top.indices.tolist(), top.values.tolist(), strict=True)]
