"""Attention rollout (Abnar and Zuidema, 2020): how much each input token flows into each position, across layers.

Per layer l the heads are averaged and the residual connection is counted as attention to oneself:
    Ā_l = rownorm(mean_h A_l + I)            (rows sum to 1; equal to (mean_h A_l + I) / 2)
and the layers are chained from the bottom up, later layers on the left:
    R_l = Ā_l Ā_(l-1) ... Ā_0
so R_l[i, j] is the share of position i after layer l that traces back to input token j. It is a heuristic:
it ignores the values, W_O, the feed-forward blocks and the LayerNorms, so it says where attention routes
information, not what the model does with it.
"""

from __future__ import annotations

import torch


def residual_attention(attentions: torch.Tensor) -> torch.Tensor:
    """Ā per layer, (L, H, T, T) -> (L, T, T): the head average plus the identity (the residual), rows renormalised."""
    mixed = attentions.mean(dim=1) + torch.eye(attentions.size(-1), dtype=attentions.dtype)  # (L, T, T)
    return mixed / mixed.sum(dim=-1, keepdim=True)


def rollout(attentions: torch.Tensor) -> torch.Tensor:
    """R_l = Ā_l ... Ā_0 after every layer l, (L, H, T, T) -> (L, T, T); R_(L-1) is the whole model's rollout."""
    steps = residual_attention(attentions)  # (L, T, T)
    chained = torch.empty_like(steps)
    chained[0] = steps[0]
    for layer in range(1, steps.size(0)):
        chained[layer] = steps[layer] @ chained[layer - 1]
    return chained
