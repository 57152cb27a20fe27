"""Training data for the decoders: random symbols that repeat with a period drawn per sequence."""

from __future__ import annotations

import torch

VOCAB = tuple("abcdefghijklmnopqrstuvwxyz0123456789")  # typeable, no whitespace
START = "^"  # start marker, token id len(VOCAB); never typed, never predicted


def repeating(n_seq: int, length: int, periods: tuple[int, int], gen: torch.Generator) -> torch.Tensor:
    """(n_seq, length) symbol ids: each row a random period of distinct symbols, repeated."""
    v = len(VOCAB)
    rows = []
    for _ in range(n_seq):
        p = int(torch.randint(periods[0], periods[1] + 1, (1,), generator=gen))
        block = torch.randperm(v, generator=gen)[:p]  # distinct within a period
        rows.append(block.repeat(length // p + 1)[:length])
    return torch.stack(rows)  # (B, T)


def first_mask(ids: torch.Tensor) -> torch.Tensor:
    """Boolean (B, T): True where the symbol appears for the first time in its row."""
    b, t = ids.shape
    same = ids[:, :, None] == ids[:, None, :]  # (B, T, T)
    earlier = torch.ones(t, t, dtype=torch.bool).tril(-1)
    return ~(same & earlier).any(-1)
