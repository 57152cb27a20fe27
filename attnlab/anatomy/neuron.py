"""The Neuron view's math: one query of one head taken apart, its check against PyTorch, the Thinking Machines preset.

Pure torch: every elementwise product, sum, scaled score and weight behind one output row.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.attention import attention_steps, default_scale, stable_softmax


@dataclass(frozen=True)
class Neuron:
    """Attention for one query i of one head, with every elementwise step kept."""

    i: int
    q_i: torch.Tensor  # (d_k,)
    k: torch.Tensor  # (T_k, d_k)
    v: torch.Tensor  # (T_k, d_v)
    products: torch.Tensor  # (T_k, d_k) q_i * k_j, elementwise
    dots: torch.Tensor  # (T_k,) q_i · k_j = the sum of each row of products
    scale: float
    scaled: torch.Tensor  # (T_k,) dots * scale
    blocked: torch.Tensor  # (T_k,) bool: the mask forbids key j
    weights: torch.Tensor  # (T_k,) softmax over the keys that are not blocked (all 0 if none is left)
    weighted: torch.Tensor  # (T_k, d_v) a_j * v_j
    z: torch.Tensor  # (d_v,) sum_j a_j v_j

    @property
    def sees_nothing(self) -> bool:
        """True when every key is blocked: the weights and z are 0."""
        return bool(self.blocked.all())


def neuron(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    i: int,
    *,
    is_causal: bool = False,
    keep: torch.Tensor | None = None,
    scale: float | None = None,
    bias: torch.Tensor | None = None,
) -> Neuron:
    """Decompose row i of softmax(q k^T * scale + M) v for one head: q (T_q, d_k), k (T_k, d_k), v (T_k, d_v).

    `is_causal` blocks keys after i (SDPA's top-left alignment); `keep` (T_k,) bool blocks keys
    where it is False; `bias` (T_k,) is added to the scaled scores (ALiBi's), and `scaled` includes it.
    """
    if not 0 <= i < q.size(0):
        raise IndexError(f"query {i} outside 0..{q.size(0) - 1}")
    scale = default_scale(q, scale)
    q_i = q[i]
    products = q_i[None, :] * k
    dots = products.sum(dim=-1)
    scaled = dots * scale if bias is None else dots * scale + bias
    blocked = torch.zeros(k.size(0), dtype=torch.bool)
    if is_causal:
        blocked |= torch.arange(k.size(0)) > i
    if keep is not None:
        blocked |= ~keep
    masked = scaled.masked_fill(blocked, float("-inf"))
    _, weights = stable_softmax(masked)
    weighted = weights[:, None] * v
    return Neuron(i, q_i, k, v, products, dots, scale, scaled, blocked, weights, weighted, weighted.sum(dim=0))


@dataclass(frozen=True)
class TracedNeuron:
    """One query's decomposition, with its z held against the full attention's row and SDPA's."""

    neuron: Neuron
    against_row: float  # max |z_i - attention_steps(q, k, v).output[i]|
    against_sdpa: float  # max |z_i - F.scaled_dot_product_attention(q, k, v)[i]|


def trace(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    i: int,
    *,
    is_causal: bool = False,
    attn_mask: torch.Tensor | None = None,
) -> TracedNeuron:
    """Take row i of one head apart and check the sum it ends in against the whole computation, twice.

    `attn_mask` (T_q, T_k) is SDPA's: bool (True = may attend, a rule beyond causal) or float (ALiBi's bias, -inf
    where blocked), given instead of `is_causal`.
    """
    keep, bias = None, None
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = attn_mask[i]
    elif attn_mask is not None:
        keep, bias = ~torch.isneginf(attn_mask[i]), attn_mask[i].masked_fill(torch.isneginf(attn_mask[i]), 0.0)
    n = neuron(q, k, v, i, is_causal=is_causal, keep=keep, bias=bias)
    row = attention_steps(q, k, v, attn_mask=attn_mask, is_causal=is_causal).output[i]
    causal = is_causal and attn_mask is None  # SDPA takes one or the other
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=causal)[i]
    return TracedNeuron(n, float((n.z - row).abs().max()), float((n.z - sdpa).abs().max()))


@dataclass(frozen=True)
class Preset:
    """A tiny hand-made example: tokens with their query, key and value vectors (one head)."""

    tokens: list[str]
    q: torch.Tensor  # (T, d_k)
    k: torch.Tensor
    v: torch.Tensor


THINKING_SCORES = (112, 96)  # q_1 · k_1 and q_1 · k_2 in the classic illustrated example
THINKING_D_K = 64


def vector_with_dot(q: torch.Tensor, target: int, gen: torch.Generator) -> torch.Tensor:
    """An integer vector k near q with q · k == target exactly (integers, so exact in float too).

    Starts from q plus small noise, then nudges coordinates where |q_d| = 1 by one unit at a time,
    each step moving the dot product by exactly 1 toward the target.
    """
    k = q + torch.randint(-1, 2, q.shape, generator=gen)
    unit = torch.nonzero(q.abs() == 1).flatten()
    if unit.numel() == 0:
        raise ValueError("q needs at least one coordinate equal to ±1")
    diff = target - int(q @ k)
    while diff:
        d = unit[torch.randint(unit.numel(), (1,), generator=gen)].item()
        step = (1 if diff > 0 else -1) * int(q[d])  # q_d = ±1, so q · k moves by exactly ±1
        k[d] += step
        diff -= 1 if diff > 0 else -1
    return k


def thinking_machines(seed: int = 0, dtype=torch.float64) -> Preset:
    """ "Thinking Machines": real d_k = 64 vectors with q_1·k_1 = 112 and q_1·k_2 = 96.

    Divided by sqrt(64) = 8 they give 14 and 12, and softmax gives about 0.88 and 0.12; none of
    these numbers is written down here, they come out of the vectors.
    """
    gen = torch.Generator().manual_seed(seed)
    q = torch.randint(-2, 3, (2, THINKING_D_K), generator=gen)
    k1 = vector_with_dot(q[0], THINKING_SCORES[0], gen)
    k2 = vector_with_dot(q[0], THINKING_SCORES[1], gen)
    v = torch.randint(-3, 4, (2, THINKING_D_K), generator=gen)
    return Preset(["Thinking", "Machines"], q.to(dtype), torch.stack([k1, k2]).to(dtype), v.to(dtype))
