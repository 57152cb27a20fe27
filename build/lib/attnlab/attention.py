"""Scaled dot-product attention, one visible stage at a time.

`attention_steps` takes exactly the arguments of `F.scaled_dot_product_attention` and
returns every intermediate tensor, so a viewer can draw each stage and a test can hold
the final output against PyTorch's fused kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class AttentionSteps:
    """Every stage of softmax(Q K^T * scale + M) V, shapes (..., T_q, T_k) or (..., T, d)."""

    q: torch.Tensor  # (..., T_q, d_k)
    k: torch.Tensor  # (..., T_k, d_k)
    v: torch.Tensor  # (..., T_k, d_v)
    scores: torch.Tensor  # (..., T_q, T_k) = q @ k^T
    scaled: torch.Tensor  # scores * scale
    bias: torch.Tensor  # (..., T_q, T_k) additive mask: 0 where allowed, -inf where blocked
    masked: torch.Tensor  # scaled + bias
    shifted: torch.Tensor  # masked minus its row max (the stable softmax's first step)
    weights: torch.Tensor  # softmax(masked); rows that see no key are all 0
    dropped: torch.Tensor  # weights after dropout (the same tensor when dropout_p == 0)
    output: torch.Tensor  # (..., T_q, d_v) = dropped @ v
    scale: float

    @property
    def blocked(self) -> torch.Tensor:
        """Boolean (..., T_q, T_k): True where the mask forbids the query to see the key."""
        return torch.isneginf(self.masked)

    @property
    def empty_rows(self) -> torch.Tensor:
        """Boolean (..., T_q): True for queries that may see no key at all (weights and output 0)."""
        return self.blocked.all(dim=-1)


def default_scale(q: torch.Tensor, scale: float | None = None) -> float:
    """SDPA's rule: the given scale, else 1/sqrt(d_k) from the query's last dimension."""
    return 1.0 / math.sqrt(q.size(-1)) if scale is None else float(scale)


def causal_mask(t_q: int, t_k: int, device: torch.device | str | None = None) -> torch.Tensor:
    """SDPA's `is_causal` mask: lower triangle aligned to the top-left corner, True = may attend."""
    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(diagonal=0)


def mask_to_bias(
    attn_mask: torch.Tensor | None, is_causal: bool, t_q: int, t_k: int, dtype: torch.dtype, device
) -> torch.Tensor:
    """Turn SDPA's mask arguments into one additive bias (0 = allowed, -inf = blocked)."""
    bias = torch.zeros(t_q, t_k, dtype=dtype, device=device)
    if is_causal:
        bias = bias.masked_fill(~causal_mask(t_q, t_k, device), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(~attn_mask, float("-inf"))
        else:
            bias = bias + attn_mask.to(dtype)
    return bias


def stable_softmax(masked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax over the last dim that subtracts the row max; a row of only -inf gives zeros, not NaN."""
    if masked.size(-1) == 0:  # no keys at all (T_k = 0): SDPA returns zeros, so do we
        row_max = masked.new_zeros(*masked.shape[:-1], 1)
    else:
        row_max = masked.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    shifted = masked - row_max
    exp = torch.exp(shifted)
    total = exp.sum(dim=-1, keepdim=True)
    weights = torch.where(total > 0, exp / total.clamp_min(torch.finfo(exp.dtype).tiny), torch.zeros_like(exp))
    return shifted, weights


def attention_steps(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> AttentionSteps:
    """Compute attention like F.scaled_dot_product_attention but keep every intermediate tensor.

    Dropout draws from torch's global generator exactly as the SDPA math backend does, so
    seeding it before both calls gives the same mask.
    """
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    t_q, t_k = q.size(-2), k.size(-2)
    scale = default_scale(q, scale)
    scores = q @ k.transpose(-2, -1)  # (..., T_q, T_k)
    scaled = scores * scale
    bias = mask_to_bias(attn_mask, is_causal, t_q, t_k, scores.dtype, scores.device)
    masked = scaled + bias  # a batched mask may broadcast scaled up
    bias = bias.expand_as(masked)
    shifted, weights = stable_softmax(masked)
    dropped = F.dropout(weights, dropout_p, training=True) if dropout_p > 0 else weights
    output = dropped @ v  # (..., T_q, d_v)
    return AttentionSteps(q, k, v, scores, scaled, bias, masked, shifted, weights, dropped, output, scale)
