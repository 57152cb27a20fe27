"""Multi-head attention with the seeds' conventions (Q = X @ W_Q + b_Q) and every per-head stage kept.

nn.Linear and nn.MultiheadAttention store W^T; only `to_torch` and `from_torch` know that.
The biases are optional: the Playground's projections have none, a trained BERT layer has all four.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Literal

import torch
from torch import nn

from attnlab.attention import AttentionSteps, attention_steps

Init = Literal["random", "identity", "zeros"]
NAMES = ("w_q", "w_k", "w_v", "w_o")
BIAS_NAMES = ("b_q", "b_k", "b_v", "b_o")


@dataclass(frozen=True)
class MultiHeadWeights:
    """The four (d_model, d_model) projections and, all four or none, their (d_model,) biases.

    Head h reads columns h*d_k:(h+1)*d_k of W_Q, W_K, W_V and the same entries of b_Q, b_K, b_V.
    """

    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    w_o: torch.Tensor
    b_q: torch.Tensor | None = None
    b_k: torch.Tensor | None = None
    b_v: torch.Tensor | None = None
    b_o: torch.Tensor | None = None

    def __post_init__(self) -> None:
        shapes = {name: tuple(getattr(self, name).shape) for name in NAMES}
        d = self.w_q.size(0)
        if any(shape != (d, d) for shape in shapes.values()):
            raise ValueError(f"every projection must be square and the same size, got {shapes}")
        biases = [getattr(self, name) for name in BIAS_NAMES]
        if any(b is None for b in biases) and any(b is not None for b in biases):
            raise ValueError("give all four biases (b_q, b_k, b_v, b_o) or none, as nn.MultiheadAttention has")
        if self.has_bias and any(tuple(b.shape) != (d,) for b in biases):
            raise ValueError(f"every bias must have shape ({d},), got {[tuple(b.shape) for b in biases]}")

    @property
    def d_model(self) -> int:
        """Width of the model: rows (and columns) of every projection."""
        return self.w_q.size(0)

    @property
    def has_bias(self) -> bool:
        """True when the projections add b_Q, b_K, b_V, b_O (a trained BERT layer), False for X @ W alone."""
        return self.b_q is not None

    @classmethod
    def random(cls, d_model: int, seed: int = 0, init: Init = "random", dtype=torch.float64) -> MultiHeadWeights:
        """Seeded weights: scaled normal N(0, 1/d_model), identity (Q = K = V = X) or zeros."""
        if init == "identity":
            eye = torch.eye(d_model, dtype=dtype)
            return cls(eye, eye.clone(), eye.clone(), eye.clone())
        if init == "zeros":
            zero = torch.zeros(d_model, d_model, dtype=dtype)
            return cls(zero, zero.clone(), zero.clone(), zero.clone())
        gen = torch.Generator().manual_seed(int(seed))
        stack = torch.randn(4, d_model, d_model, generator=gen, dtype=torch.float64) / math.sqrt(d_model)
        return cls(*(m.to(dtype) for m in stack))

    def as_dict(self) -> dict[str, torch.Tensor]:
        """Name -> matrix, in the order W_Q, W_K, W_V, W_O."""
        return {name: getattr(self, name) for name in NAMES}

    def bias_dict(self) -> dict[str, torch.Tensor]:
        """Name -> bias, in the order b_Q, b_K, b_V, b_O; empty for bias-free weights."""
        return {name: getattr(self, name) for name in BIAS_NAMES} if self.has_bias else {}

    def replace(self, **tensors: torch.Tensor) -> MultiHeadWeights:
        """A copy with some projections (or biases) swapped (the weights are immutable)."""
        return MultiHeadWeights(**{**self.as_dict(), **self.bias_dict(), **tensors})

    def to(self, dtype: torch.dtype) -> MultiHeadWeights:
        """The same weights (and biases) in another dtype."""
        return MultiHeadWeights(**{f.name: _cast(getattr(self, f.name), dtype) for f in fields(self)})

    def fused_qkv(self) -> torch.Tensor:
        """W_Q, W_K, W_V side by side: (d_model, 3*d_model), one matmul for all three projections."""
        return torch.cat([self.w_q, self.w_k, self.w_v], dim=1)

    def to_torch(self, n_heads: int) -> nn.MultiheadAttention:
        """An nn.MultiheadAttention (batch_first, bias=has_bias) that computes exactly these projections."""
        d = self.d_model
        check_heads(d, n_heads)
        mha = nn.MultiheadAttention(d, n_heads, bias=self.has_bias, batch_first=True, dtype=self.w_q.dtype)
        with torch.no_grad():
            mha.in_proj_weight.copy_(self.fused_qkv().T)  # (3*d_model, d_model): stacked W^T
            mha.out_proj.weight.copy_(self.w_o.T)
            if self.has_bias:
                mha.in_proj_bias.copy_(torch.cat([self.b_q, self.b_k, self.b_v]))  # (3*d_model,)
                mha.out_proj.bias.copy_(self.b_o)
        return mha.eval()

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention) -> MultiHeadWeights:
        """Read the projections (and biases, if it has them) back out of an nn.MultiheadAttention."""
        if mha.in_proj_weight is None:
            raise ValueError("only nn.MultiheadAttention with kdim == vdim == embed_dim is supported")
        if mha.bias_k is not None:
            raise ValueError("add_bias_kv appends a key and a value; only plain projection biases are supported")
        w_q_t, w_k_t, w_v_t = mha.in_proj_weight.detach().chunk(3, dim=0)
        matrices = (w_q_t.T.clone(), w_k_t.T.clone(), w_v_t.T.clone(), mha.out_proj.weight.detach().T.clone())
        if mha.in_proj_bias is None:
            return cls(*matrices)
        b_q, b_k, b_v = mha.in_proj_bias.detach().clone().chunk(3)
        return cls(*matrices, b_q, b_k, b_v, mha.out_proj.bias.detach().clone())


@dataclass(frozen=True)
class MultiHeadSteps:
    """Inputs, full projections, per-head attention stages, concatenation and output."""

    x_q: torch.Tensor  # (..., T_q, d_model)
    x_kv: torch.Tensor  # (..., T_k, d_model)
    q: torch.Tensor  # (..., T_q, d_model) = x_q @ W_Q (+ b_Q)
    k: torch.Tensor  # (..., T_k, d_model)
    v: torch.Tensor  # (..., T_k, d_model)
    heads: AttentionSteps  # every tensor (..., H, T, d_k) or (..., H, T_q, T_k)
    concat: torch.Tensor  # (..., T_q, d_model): heads side by side
    output: torch.Tensor  # (..., T_q, d_model) = concat @ W_O (+ b_O)
    n_heads: int

    @property
    def d_k(self) -> int:
        """Width of one head."""
        return self.q.size(-1) // self.n_heads


def _cast(t: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    """A tensor in another dtype; an absent bias stays absent."""
    return None if t is None else t.to(dtype)


def project(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """X @ W, plus b when the projection has a bias: (..., T, d_in) -> (..., T, d_out)."""
    return x @ w if b is None else x @ w + b


def check_heads(d_model: int, n_heads: int) -> None:
    """Refuse a head count that does not split d_model evenly."""
    if n_heads < 1 or d_model % n_heads:
        raise ValueError(f"heads ({n_heads}) must be a positive divisor of d_model ({d_model})")


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(..., T, d_model) -> (..., H, T, d_k)."""
    *lead, t, d = x.shape
    return x.reshape(*lead, t, n_heads, d // n_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(..., H, T, d_k) -> (..., T, H*d_k): the concatenation of the heads."""
    *lead, h, t, d_k = x.shape
    return x.transpose(-3, -2).reshape(*lead, t, h * d_k)


def multi_head_steps(
    x_q: torch.Tensor,
    x_kv: torch.Tensor,
    weights: MultiHeadWeights,
    n_heads: int,
    *,
    is_causal: bool = False,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> MultiHeadSteps:
    """Project (with the biases, if any), split into heads, attend per head, concatenate and apply W_O.

    attn_mask follows SDPA (bool True = may attend, float = added) with shape broadcastable to
    (..., H, T_q, T_k); pass x_kv = x_q for self-attention. `scale` is SDPA's (None = 1/sqrt(d_k)).
    """
    check_heads(weights.d_model, n_heads)
    q = project(x_q, weights.w_q, weights.b_q)  # (..., T_q, D)
    k = project(x_kv, weights.w_k, weights.b_k)  # (..., T_k, D)
    v = project(x_kv, weights.w_v, weights.b_v)  # (..., T_k, D)
    heads = attention_steps(
        split_heads(q, n_heads),
        split_heads(k, n_heads),
        split_heads(v, n_heads),
        attn_mask=attn_mask,
        dropout_p=dropout_p,
        is_causal=is_causal,
        scale=scale,
    )
    concat = merge_heads(heads.output)  # (..., T_q, D)
    output = project(concat, weights.w_o, weights.b_o)  # (..., T_q, D)
    return MultiHeadSteps(x_q, x_kv, q, k, v, heads, concat, output, n_heads)
