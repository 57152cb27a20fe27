"""Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434), every stage kept, in its plain and absorbed forms.

The cache holds, per token, one latent c = RMSNorm(x W_DKV) and one rotated key k_R = RoPE(x W_KR) that every head
shares. Head h's key is [c W_UK_h | k_R] and its value c W_UV_h. Absorbed, W_UK_h moves to the query side:
q_nope W_UK_h^T is a query in the latent's own space, so the scores come from the cache itself and no per-head key
is ever formed (what DeepSeek's inference code does); the weights then read the latent, and W_UV_h follows.

Choices the contract leaves open: the queries come from one projection W_Q (no query low-rank, as DeepSeek-V2-Lite);
the latent is RMS-normalised before it is cached (DeepSeek's kv_a_layernorm, eps 1e-6); RoPE uses DeepSeek's own
layout, interleaved pairs (2i, 2i+1), base 10000, positions 0..T-1 (`attnlab.positions.rope`); the scale is
1/sqrt(nope_dim + rope_dim).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from attnlab.attention import attention_steps
from attnlab.positions import rope

EPS = 1e-6  # the latent's RMSNorm epsilon (DeepSeek-V2/V3's rms_norm_eps)
BASE = 10000.0  # RoPE's base (DeepSeek's rope_theta)


@dataclass(frozen=True)
class MLAWeights:
    """One MLA layer's weights, applied as x @ W (the seeds' convention); head h owns columns h*d:(h+1)*d."""

    w_q: torch.Tensor  # (d_model, H * (nope_dim + rope_dim)): head h's columns are [nope | rope]
    w_dkv: torch.Tensor  # (d_model, latent): X -> the latent, before its norm
    kv_norm: torch.Tensor  # (latent,): the RMSNorm gain
    w_kr: torch.Tensor  # (d_model, rope_dim): X -> the shared key, before its rotation
    w_uk: torch.Tensor  # (latent, H * nope_dim): latent -> each head's unrotated key
    w_uv: torch.Tensor  # (latent, H * v_dim): latent -> each head's value
    w_o: torch.Tensor  # (H * v_dim, d_model)
    nope_dim: int
    rope_dim: int
    v_dim: int

    @classmethod
    def random(
        cls,
        d_model: int,
        n_heads: int,
        latent: int,
        nope_dim: int,
        rope_dim: int,
        v_dim: int,
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> MLAWeights:
        """Gaussian weights scaled by 1/sqrt(fan-in), the norm's gain near 1; the same seed gives the same numbers."""
        for name, value in (("d_model", d_model), ("n_heads", n_heads), ("latent", latent)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        for name, value in (("nope_dim", nope_dim), ("v_dim", v_dim)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if rope_dim < 2 or rope_dim % 2:
            raise ValueError(f"rope_dim must be even and at least 2 (RoPE turns pairs), got {rope_dim}")
        gen = torch.Generator().manual_seed(seed)

        def randn(rows: int, cols: int) -> torch.Tensor:
            return (torch.randn(rows, cols, generator=gen, dtype=torch.float64) / math.sqrt(rows)).to(dtype)

        gain = (1 + 0.1 * torch.randn(latent, generator=gen, dtype=torch.float64)).to(dtype)
        return cls(
            w_q=randn(d_model, n_heads * (nope_dim + rope_dim)),
            w_dkv=randn(d_model, latent),
            kv_norm=gain,
            w_kr=randn(d_model, rope_dim),
            w_uk=randn(latent, n_heads * nope_dim),
            w_uv=randn(latent, n_heads * v_dim),
            w_o=randn(n_heads * v_dim, d_model),
            nope_dim=nope_dim,
            rope_dim=rope_dim,
            v_dim=v_dim,
        )

    @property
    def latent(self) -> int:
        """Width of the cached latent."""
        return self.w_dkv.size(1)

    def to(self, dtype: torch.dtype) -> MLAWeights:
        """The same weights in another dtype."""
        names = ("w_q", "w_dkv", "kv_norm", "w_kr", "w_uk", "w_uv", "w_o")
        return replace(self, **{n: getattr(self, n).to(dtype) for n in names})

    def per_head(self, n_heads: int) -> tuple[torch.Tensor, torch.Tensor]:
        """W_UK and W_UV split by head: (H, latent, nope_dim) and (H, latent, v_dim)."""
        c = self.latent
        return (
            self.w_uk.view(c, n_heads, self.nope_dim).transpose(0, 1),
            self.w_uv.view(c, n_heads, self.v_dim).transpose(0, 1),
        )


@dataclass(frozen=True)
class MLASteps:
    """Every stage of one MLA layer on x (T, d_model); H heads, C the latent, R the rotated width."""

    x: torch.Tensor  # (T, d_model)
    latent: torch.Tensor  # (T, C): RMSNorm(x W_DKV), what is cached
    k_rope: torch.Tensor  # (T, R): RoPE(x W_KR), the one rotated key every head shares, cached too
    q: torch.Tensor  # (H, T, nope + R): [q_nope | rotated q_rope]
    k: torch.Tensor | None  # (H, T, nope + R): [latent W_UK_h | k_rope]; None when absorbed (never formed)
    v: torch.Tensor | None  # (H, T, v_dim): latent W_UV_h; None when absorbed
    q_absorbed: torch.Tensor | None  # (H, T, C + R): [q_nope W_UK_h^T | rotated q_rope]; None when plain
    scores: torch.Tensor  # (H, T, T): the dot products, before the scale
    weights: torch.Tensor  # (H, T, T)
    heads: torch.Tensor  # (H, T, v_dim): each head's output
    output: torch.Tensor  # (T, d_model): the heads side by side through W_O
    scale: float
    absorbed: bool

    @property
    def cached_per_token(self) -> int:
        """Numbers one token adds to this layer's cache: the latent and the shared rotated key."""
        return self.latent.size(-1) + self.k_rope.size(-1)


def rms_norm(x: torch.Tensor, gain: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """x / rms(x) * gain over the last dimension."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


def _check(x: torch.Tensor, w: MLAWeights, n_heads: int) -> None:
    """Refuse shapes that do not fit, naming the argument."""
    if x.dim() != 2:
        raise ValueError(f"x must be (T, d_model), got shape {tuple(x.shape)}")
    if x.size(1) != w.w_q.size(0):
        raise ValueError(f"x has width {x.size(1)} but the weights expect d_model = {w.w_q.size(0)}")
    if n_heads < 1 or w.w_uk.size(1) != n_heads * w.nope_dim or w.w_uv.size(1) != n_heads * w.v_dim:
        raise ValueError(f"n_heads = {n_heads} does not match the weights' per-head columns")


def mla_steps(
    x: torch.Tensor, weights: MLAWeights, n_heads: int, *, is_causal: bool = True, absorbed: bool = False
) -> MLASteps:
    """Every stage of DeepSeek-V2's multi-head latent attention; `absorbed` scores the cached latent directly."""
    _check(x, weights, n_heads)
    w, t = weights, x.size(0)
    latent = rms_norm(x @ w.w_dkv, w.kv_norm)  # (T, C)
    k_rope = rope(x @ w.w_kr, base=BASE, interleaved=True)  # (T, R)
    q = (x @ w.w_q).view(t, n_heads, w.nope_dim + w.rope_dim).transpose(0, 1)  # (H, T, nope + R)
    q_nope, q_rot = q.split([w.nope_dim, w.rope_dim], -1)
    q = torch.cat([q_nope, rope(q_rot, base=BASE, interleaved=True)], -1)
    q_rot = q[..., w.nope_dim :]  # (H, T, R), rotated
    w_uk, w_uv = w.per_head(n_heads)  # (H, C, nope), (H, C, v_dim)
    scale = 1.0 / math.sqrt(w.nope_dim + w.rope_dim)
    if absorbed:
        q_abs = torch.cat([q_nope @ w_uk.transpose(1, 2), q_rot], -1)  # (H, T, C + R): queries in the latent's space
        cache = torch.cat([latent, k_rope], -1)[None]  # (1, T, C + R): one key for every head, as in MQA
        s = attention_steps(q_abs, cache, latent[None], is_causal=is_causal, scale=scale)
        heads = s.output @ w_uv  # (H, T, C) -> (H, T, v_dim)
        k = v = None
    else:
        k = torch.cat([latent @ w_uk, k_rope.expand(n_heads, t, w.rope_dim)], -1)  # (H, T, nope + R)
        v = latent @ w_uv  # (H, T, v_dim)
        s = attention_steps(q, k, v, is_causal=is_causal, scale=scale)
        heads, q_abs = s.output, None
    output = heads.transpose(0, 1).reshape(t, n_heads * w.v_dim) @ w.w_o  # (T, d_model)
    return MLASteps(x, latent, k_rope, q, k, v, q_abs, s.scores, s.weights, heads, output, scale, absorbed)


def cache_per_token(d_model: int, n_heads: int, kv_heads: int) -> int:
    """Numbers per token per layer that MHA (kv_heads = n_heads), GQA or MQA (1) of width d_model caches."""
    if n_heads < 1 or d_model % n_heads or kv_heads < 1 or n_heads % kv_heads:
        raise ValueError(f"n_heads must divide d_model and kv_heads n_heads, got {d_model}, {n_heads}, {kv_heads}")
    return 2 * kv_heads * (d_model // n_heads)
