"""Multi-head attention with the seeds' conventions (Q = X @ W_Q + b_Q) and every per-head stage kept.

nn.Linear and nn.MultiheadAttention store W^T; only `to_torch` and `from_torch` know that.
The biases are optional: the Playground's projections have none, a trained BERT layer has all four.
Modern variants (contract 13): W_K and W_V may be narrower than W_Q (grouped-query attention: query head h reads
key/value head h // (H / H_kv), as SDPA's enable_gqa and transformers' repeat_kv do; one key/value head is
multi-query), q and k may be rotated (RoPE, `attnlab.positions.rope`) and ALiBi's bias added to the scaled scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Literal

import torch
from torch import nn

from attnlab.attention import AttentionSteps, attention_steps
from attnlab.positions import LAYOUTS, alibi_bias
from attnlab.positions import rope as rotate

Init = Literal["random", "identity", "zeros"]
NAMES = ("w_q", "w_k", "w_v", "w_o")
BIAS_NAMES = ("b_q", "b_k", "b_v", "b_o")


@dataclass(frozen=True)
class MultiHeadWeights:
    """The four projections and, all four or none, their biases: W_Q, W_O (d_model, d_model), W_K, W_V (d_model, d_kv).

    Head h reads columns h*d_k:(h+1)*d_k of W_Q, W_K, W_V and the same entries of b_Q, b_K, b_V. d_kv = d_model is
    classic multi-head attention; a narrower d_kv (a divisor of d_model) holds fewer key/value heads, each shared by
    a group of query heads (grouped-query attention).
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
        d_kv = shapes["w_k"][1] if len(shapes["w_k"]) == 2 else -1
        wanted = {"w_q": (d, d), "w_k": (d, d_kv), "w_v": (d, d_kv), "w_o": (d, d)}
        if shapes != wanted or not 1 <= d_kv <= d or d % d_kv:
            raise ValueError(
                "W_Q and W_O must be square (d_model, d_model), W_K and W_V both (d_model, d_kv) with d_kv dividing "
                f"d_model (d_kv = d_model unless key/value heads are shared), got {shapes}"
            )
        biases = [getattr(self, name) for name in BIAS_NAMES]
        if any(b is None for b in biases) and any(b is not None for b in biases):
            raise ValueError("give all four biases (b_q, b_k, b_v, b_o) or none, as nn.MultiheadAttention has")
        sizes = [(d,), (d_kv,), (d_kv,), (d,)]
        if self.has_bias and [tuple(b.shape) for b in biases] != sizes:
            raise ValueError(f"the biases must have shapes {sizes}, got {[tuple(b.shape) for b in biases]}")

    @property
    def d_model(self) -> int:
        """Width of the model: rows (and columns) of every projection."""
        return self.w_q.size(0)

    @property
    def d_kv(self) -> int:
        """Width of W_K and W_V: every key/value head side by side (d_model unless heads share them)."""
        return self.w_k.size(1)

    @property
    def grouped(self) -> bool:
        """True when W_K and W_V are narrower than W_Q: fewer key/value heads than query heads."""
        return self.d_kv != self.d_model

    def kv_heads(self, n_heads: int) -> int:
        """How many key/value heads W_K and W_V hold when W_Q is split into `n_heads`; ValueError if no whole number."""
        check_heads(self.d_model, n_heads)
        d_k = self.d_model // n_heads
        if self.d_kv % d_k or n_heads % (self.d_kv // d_k):
            raise ValueError(
                f"W_K and W_V are {self.d_kv} wide: with heads={n_heads} of width {d_k} that is no whole number of "
                "key/value heads dividing the query heads"
            )
        return self.d_kv // d_k

    @property
    def has_bias(self) -> bool:
        """True when the projections add b_Q, b_K, b_V, b_O (a trained BERT layer), False for X @ W alone."""
        return self.b_q is not None

    @classmethod
    def random(
        cls,
        d_model: int,
        seed: int = 0,
        init: Init = "random",
        dtype=torch.float64,
        *,
        n_heads: int | None = None,
        n_kv_heads: int | None = None,
    ) -> MultiHeadWeights:
        """Seeded weights: scaled normal N(0, 1/d_model), identity (Q = K = V = X) or zeros.

        With n_kv_heads < n_heads, W_K and W_V are the same seed's square ones mean-pooled over each group of query
        heads (how Ainslie et al. turn a multi-head checkpoint into a grouped-query one), so n_kv_heads == n_heads,
        or None, gives exactly the classic weights.
        """
        if init == "identity":
            eye = torch.eye(d_model, dtype=dtype)
            stack = torch.stack([eye, eye, eye, eye])
        elif init == "zeros":
            stack = torch.zeros(4, d_model, d_model, dtype=dtype)
        else:
            gen = torch.Generator().manual_seed(int(seed))
            stack = torch.randn(4, d_model, d_model, generator=gen, dtype=torch.float64) / math.sqrt(d_model)
        w_q, w_k, w_v, w_o = (m.to(dtype).clone() for m in stack)
        if n_kv_heads is not None and n_kv_heads != n_heads:
            w_k, w_v = (pool_kv(w, int(n_heads or 0), n_kv_heads) for w in (w_k, w_v))
        return cls(w_q, w_k, w_v, w_o)

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
        """W_Q, W_K, W_V side by side: (d_model, d_model + 2*d_kv), one matmul for all three projections."""
        return torch.cat([self.w_q, self.w_k, self.w_v], dim=1)

    def to_torch(self, n_heads: int) -> nn.MultiheadAttention:
        """An nn.MultiheadAttention (batch_first, bias=has_bias) that computes exactly these projections.

        ValueError for grouped weights: nn.MultiheadAttention has one key/value head per query head and no place
        for narrower W_K, W_V (check those against SDPA with enable_gqa, or transformers' LlamaAttention).
        """
        d = self.d_model
        check_heads(d, n_heads)
        if self.grouped:
            raise ValueError(
                f"nn.MultiheadAttention cannot hold grouped-query weights (W_K, W_V of width {self.d_kv} < d_model "
                f"{d}): it has one key/value head per query head"
            )
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
    """Inputs, full projections, per-head attention stages, concatenation and output.

    `heads` holds what the scores use: queries and keys rotated when RoPE is on, keys and values repeated to H.
    The key/value heads before the repeat are `k_shared`, `v_shared`; q and k before the rotation are
    `q_unrotated`, `k_unrotated` (None without RoPE); `alibi` is the bias added to the scaled scores (or None).
    """

    x_q: torch.Tensor  # (..., T_q, d_model)
    x_kv: torch.Tensor  # (..., T_k, d_model)
    q: torch.Tensor  # (..., T_q, d_model) = x_q @ W_Q (+ b_Q)
    k: torch.Tensor  # (..., T_k, d_kv) = x_kv @ W_K (+ b_K): every key/value head once, d_kv = H_kv * d_k
    v: torch.Tensor  # (..., T_k, d_kv)
    heads: AttentionSteps  # every tensor (..., H, T, d_k) or (..., H, T_q, T_k)
    concat: torch.Tensor  # (..., T_q, d_model): heads side by side
    output: torch.Tensor  # (..., T_q, d_model) = concat @ W_O (+ b_O)
    n_heads: int
    n_kv_heads: int = 0  # distinct key/value heads (0: as many as query heads)
    k_shared: torch.Tensor | None = None  # (..., H_kv, T_k, d_k): the keys the scores use, before the repeat
    v_shared: torch.Tensor | None = None  # (..., H_kv, T_k, d_k)
    q_unrotated: torch.Tensor | None = None  # (..., H, T_q, d_k): queries before RoPE (None without it)
    k_unrotated: torch.Tensor | None = None  # (..., H_kv, T_k, d_k): keys before RoPE
    rope: str | None = None  # "half", "interleaved" or None
    rope_base: float = 10000.0
    alibi: torch.Tensor | None = None  # (H, T_q, T_k): -slope_h * |i - j|, added to the scaled scores

    def __post_init__(self) -> None:
        if not self.n_kv_heads:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        if self.k_shared is None:  # one key/value head per query head: the shared ones are the heads' own
            object.__setattr__(self, "k_shared", self.heads.k)
            object.__setattr__(self, "v_shared", self.heads.v)

    @property
    def d_k(self) -> int:
        """Width of one head."""
        return self.q.size(-1) // self.n_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head (1: classic multi-head; H: multi-query)."""
        return self.n_heads // self.n_kv_heads

    def kv_head(self, h: int) -> int:
        """The key/value head that query head h reads (0-based)."""
        return h // self.group


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


def check_kv_heads(n_heads: int, n_kv_heads: int) -> None:
    """Refuse a key/value head count that does not divide the query heads (each group must be whole)."""
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads ({n_kv_heads}) must be a positive divisor of n_heads ({n_heads})")


def pool_kv(w: torch.Tensor, n_heads: int, n_kv_heads: int) -> torch.Tensor:
    """(d_model, d_model) -> (d_model, n_kv_heads * d_k): each group's query-head columns averaged into one head."""
    d = w.size(0)
    check_heads(d, n_heads)
    check_kv_heads(n_heads, n_kv_heads)
    d_k, group = d // n_heads, n_heads // n_kv_heads
    return w.reshape(d, n_kv_heads, group, d_k).mean(dim=2).reshape(d, n_kv_heads * d_k)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(..., T, d_model) -> (..., H, T, d_k)."""
    *lead, t, d = x.shape
    return x.reshape(*lead, t, n_heads, d // n_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(..., H, T, d_k) -> (..., T, H*d_k): the concatenation of the heads."""
    *lead, h, t, d_k = x.shape
    return x.transpose(-3, -2).reshape(*lead, t, h * d_k)


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """(..., H_kv, T, d_k) -> (..., H_kv * group, T, d_k), each head `group` times in a row (no copy for 1)."""
    return x if group == 1 else x.repeat_interleave(group, dim=-3)


def with_alibi(attn_mask: torch.Tensor | None, alibi: torch.Tensor) -> torch.Tensor:
    """ALiBi's bias (H, T_q, T_k) as one float mask with SDPA's mask: -inf where a bool mask blocks, a float added."""
    if attn_mask is None:
        return alibi
    if attn_mask.dtype == torch.bool:
        return torch.where(attn_mask, alibi, torch.full((), float("-inf"), dtype=alibi.dtype))
    return alibi + attn_mask.to(alibi.dtype)


def multi_head_steps(
    x_q: torch.Tensor,
    x_kv: torch.Tensor,
    weights: MultiHeadWeights,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    rope: str | None = None,
    rope_base: float = 10000.0,
    alibi: bool = False,
    is_causal: bool = False,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> MultiHeadSteps:
    """Project (with the biases, if any), split into heads, attend per head, concatenate and apply W_O.

    attn_mask follows SDPA (bool True = may attend, float = added) with shape broadcastable to
    (..., H, T_q, T_k); pass x_kv = x_q for self-attention. `scale` is SDPA's (None = 1/sqrt(d_k)).
    `n_kv_heads` defaults to what W_K holds (a given one must agree with it). `rope` ("half" or "interleaved")
    rotates every head's queries and keys at positions 0..T-1 after the projection; `alibi` adds
    `attnlab.positions.alibi_bias` for the H query heads to the scaled scores, beside any mask.
    """
    held = weights.kv_heads(n_heads)
    if n_kv_heads is not None and n_kv_heads != held:
        check_kv_heads(n_heads, n_kv_heads)
        raise ValueError(f"n_kv_heads ({n_kv_heads}) disagrees with W_K and W_V, which hold {held} key/value heads")
    if rope is not None and rope not in LAYOUTS:
        raise ValueError(f"rope must be None, 'half' or 'interleaved', got {rope!r}")
    q = project(x_q, weights.w_q, weights.b_q)  # (..., T_q, D)
    k = project(x_kv, weights.w_k, weights.b_k)  # (..., T_k, H_kv*d_k)
    v = project(x_kv, weights.w_v, weights.b_v)  # (..., T_k, H_kv*d_k)
    q_h, k_h, v_h = split_heads(q, n_heads), split_heads(k, held), split_heads(v, held)  # (..., H or H_kv, T, d_k)
    q_rot, k_rot = q_h, k_h
    if rope is not None:
        interleaved = rope == "interleaved"
        q_rot = rotate(q_h, base=rope_base, interleaved=interleaved)
        k_rot = rotate(k_h, base=rope_base, interleaved=interleaved)
    bias = None
    if alibi:
        bias = alibi_bias(n_heads, q.size(-2), k.size(-2), dtype=q.dtype)  # (H, T_q, T_k)
        attn_mask = with_alibi(attn_mask, bias)
    group = n_heads // held
    heads = attention_steps(
        q_rot,
        repeat_kv(k_rot, group),  # (..., H, T_k, d_k): query head h reads key/value head h // group
        repeat_kv(v_h, group),
        attn_mask=attn_mask,
        dropout_p=dropout_p,
        is_causal=is_causal,
        scale=scale,
    )
    concat = merge_heads(heads.output)  # (..., T_q, D)
    output = project(concat, weights.w_o, weights.b_o)  # (..., T_q, D)
    rotated = (q_h, k_h) if rope is not None else (None, None)
    return MultiHeadSteps(
        x_q, x_kv, q, k, v, heads, concat, output, n_heads, held, k_rot, v_h, *rotated, rope, rope_base, bias
    )
