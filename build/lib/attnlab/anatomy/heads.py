"""The Multi-head page's math: fused QKV, one W cut into other head counts, PyTorch's packing, dropout, full size.

Pure torch. Results carry what they were computed from, so a check panel never has to rebuild it.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.attention import causal_mask
from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, check_heads, merge_heads, multi_head_steps, split_heads
from attnlab.params import Invalid


@dataclass(frozen=True)
class FusedCheck:
    """Q, K, V from one (d_model, 3·d_model) matmul then chunk, against three separate matmuls."""

    separate: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    fused: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    diffs: dict[str, float]  # "q", "k", "v" -> max |fused - separate|

    @property
    def max_diff(self) -> float:
        """The largest difference over Q, K and V."""
        return max(self.diffs.values())


def fused_vs_separate(x: torch.Tensor, weights: MultiHeadWeights) -> FusedCheck:
    """X @ [W_Q | W_K | W_V] chunked into three, next to X @ W_Q, X @ W_K, X @ W_V."""
    w = weights.to(x.dtype)
    separate = (x @ w.w_q, x @ w.w_k, x @ w.w_v)
    fused = tuple((x @ w.fused_qkv()).chunk(3, dim=-1))
    diffs = {
        name: float((a - b).abs().max()) if a.numel() else 0.0
        for name, a, b in zip("qkv", fused, separate, strict=True)
    }
    return FusedCheck(separate, fused, diffs)


def resplit(
    x: torch.Tensor, weights: MultiHeadWeights, head_counts: list[int], is_causal: bool = False
) -> dict[int, torch.Tensor]:
    """The same W cut into different head counts: head count -> attention weights (H, T, T)."""
    return {h: multi_head_steps(x, x, weights, h, is_causal=is_causal).heads.weights for h in head_counts}


def in_proj_blocks(weights: MultiHeadWeights, n_heads: int) -> dict[str, float]:
    """How nn.MultiheadAttention packs the projections: in_proj_weight = [W_Q^T; W_K^T; W_V^T].

    Returns max |block - W^T| for each of the three row blocks and for out_proj.weight vs W_O^T.
    """
    mha = weights.to_torch(n_heads)
    blocks = mha.in_proj_weight.detach().chunk(3, dim=0)
    diffs = {
        name: float((b - w.T).abs().max())
        for name, b, w in zip("qkv", blocks, (weights.w_q, weights.w_k, weights.w_v), strict=True)
    }
    diffs["o"] = float((mha.out_proj.weight.detach() - weights.w_o.T).abs().max())
    return diffs


@dataclass(frozen=True)
class TorchCheck:
    """Our multi-head result against nn.MultiheadAttention (and SDPA per head) on the same numbers."""

    output: float  # max |ours - MHA output|
    weights: float  # max |ours - MHA per-head weights| (average_attn_weights=False)
    sdpa: float  # max |ours - F.scaled_dot_product_attention| over every head


# Dropout draws from torch's global generator (as F.dropout and SDPA do); the check reseeds it
# twice, so two sessions running the check at once must take turns.
_RNG_LOCK = threading.Lock()


@dataclass(frozen=True)
class DropoutResult:
    """Multi-head attention with dropout on the weights, and the check against PyTorch."""

    steps: MultiHeadSteps  # heads.weights before dropout, heads.dropped after
    p: float
    seed: int
    check: TorchCheck
    weights: MultiHeadWeights
    n_heads: int
    is_causal: bool

    @property
    def zeroed(self) -> int:
        """How many non-zero weights dropout set to 0."""
        heads = self.steps.heads
        return int(((heads.weights > 0) & (heads.dropped == 0)).sum())

    @property
    def kept_scale(self) -> float:
        """What a kept weight is multiplied by: 1 / (1 - p)."""
        return 1.0 / (1.0 - self.p)


def parse_dropout_p(raw: str) -> float:
    """Dropout p typed as text: a number in [0, 1), or Invalid naming why not (the page then uses 0)."""
    try:
        p = float(str(raw).strip())
    except ValueError:
        raise Invalid("p_not_number", 0.0) from None
    if not (math.isfinite(p) and 0.0 <= p < 1.0):
        raise Invalid("p_out_of_range", 0.0)
    return p


def check_dropout_p(p: float) -> float:
    """Dropout p must lie in [0, 1): p = 1 drops everything and 1/(1-p) is undefined."""
    if not (isinstance(p, int | float) and math.isfinite(p) and 0.0 <= p < 1.0):
        raise ValueError(f"dropout p must be in [0, 1), got {p!r}")
    return float(p)


def multi_head_with_torch(
    x: torch.Tensor,
    weights: MultiHeadWeights,
    n_heads: int,
    *,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    seed: int = 0,
) -> DropoutResult:
    """Self-attention with dropout p drawn from `seed`, and nn.MultiheadAttention / SDPA reseeded alike.

    Dropout is applied as F.dropout does: each weight kept with probability 1 - p and scaled by
    1/(1 - p). Our steps, the module and SDPA each start from torch.manual_seed(seed), so they draw
    the same mask; the global generator's state is restored afterwards.
    """
    p = check_dropout_p(dropout_p)
    check_heads(weights.d_model, n_heads)
    t = x.size(-2)
    blocked = ~causal_mask(t, t) if is_causal else None  # nn.MultiheadAttention: True = may NOT attend
    with _RNG_LOCK, torch.random.fork_rng(devices=[]):
        mha = weights.to_torch(n_heads)  # its __init__ draws from the global generator too
        mha.dropout = p
        mha.train(p > 0)
        torch.manual_seed(seed)
        ours = multi_head_steps(x, x, weights, n_heads, is_causal=is_causal, dropout_p=p)
        torch.manual_seed(seed)
        with torch.no_grad():
            ref, ref_w = mha(x[None], x[None], x[None], attn_mask=blocked, average_attn_weights=False)
        torch.manual_seed(seed)
        heads = ours.heads
        sdpa = F.scaled_dot_product_attention(heads.q, heads.k, heads.v, dropout_p=p, is_causal=is_causal)
    check = TorchCheck(
        float((ref[0] - ours.output).abs().max()),
        float((ref_w[0] - heads.dropped).abs().max()),
        float((sdpa - heads.output).abs().max()),
    )
    return DropoutResult(ours, p, seed, check, weights, n_heads, is_causal)


@dataclass(frozen=True)
class FullSize:
    """Shapes and counts of multi-head attention at a real model's size (e.g. d_model 512, 8 heads)."""

    d_model: int
    heads: int
    d_k: int
    q_shape: tuple[int, ...]  # (T, d_model)
    split_shape: tuple[int, ...]  # (H, T, d_k)
    scores_shape: tuple[int, ...]  # (H, T, T)
    concat_shape: tuple[int, ...]  # (T, d_model)
    projection_params: int  # 4 * d_model^2: W_Q, W_K, W_V, W_O


def full_size(d_model: int, heads: int, t: int) -> FullSize:
    """Run the real reshape on meta tensors (no memory), so the shapes shown are what torch gives."""
    check_heads(d_model, heads)
    q = torch.empty(t, d_model, device="meta")  # (T, d_model)
    split = split_heads(q, heads)  # (H, T, d_k)
    scores = split @ split.transpose(-2, -1)  # (H, T, T)
    concat = merge_heads(split)  # (T, d_model)
    return FullSize(
        d_model,
        heads,
        d_model // heads,
        tuple(q.shape),
        tuple(split.shape),
        tuple(scores.shape),
        tuple(concat.shape),
        4 * d_model * d_model,
    )
