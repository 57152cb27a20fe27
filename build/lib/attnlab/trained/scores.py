"""Per-head scores (previous-token, duplicate-token, induction) and the losses split by first/repeat."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def head_scores(att: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """(L, H, 3) mean weight on the previous token, on earlier copies, and on prefix matches.

    att is (B, L, H, T, T) over tokens (B, T). Induction is prefix matching: the weight a query
    puts on every earlier key whose previous token equals the query's own token.
    """
    t = tokens.size(1)
    earlier = torch.ones(t, t, dtype=torch.bool).tril(-1)  # key strictly before query
    prev = torch.zeros(t, t, dtype=torch.bool)
    prev[torch.arange(1, t), torch.arange(t - 1)] = True
    dup = (tokens[:, :, None] == tokens[:, None, :]) & earlier  # (B, T, T)
    before = torch.cat([tokens.new_full((tokens.size(0), 1), -1), tokens[:, :-1]], 1)  # key's previous token
    ind = (tokens[:, :, None] == before[:, None, :]) & earlier
    out = []
    for m in (prev.expand_as(dup), dup, ind):
        rows = m.any(-1)  # (B, T) queries that have such a key
        mass = (att * m[:, None, None]).sum(-1)  # (B, L, H, T)
        out.append((mass * rows[:, None, None]).sum((0, 3)) / rows.sum().clamp_min(1))
    return torch.stack(out, -1)  # (L, H, 3)


def split_losses(logits: torch.Tensor, targets: torch.Tensor, first: torch.Tensor) -> dict[str, float]:
    """Mean loss (nats) and top-1 accuracy on first occurrences and on repeats."""
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (B, T)
    hit = (logits.argmax(-1) == targets).float()
    rep = ~first
    return {
        "loss_first": float(nll[first].mean()),
        "loss_repeat": float(nll[rep].mean()),
        "acc_first": float(hit[first].mean()),
        "acc_repeat": float(hit[rep].mean()),
    }
