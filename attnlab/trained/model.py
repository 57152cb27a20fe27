"""Attention-only causal decoders whose every head goes through attnlab's own attention, with hook points.

Hook points, in the spirit of TransformerLens's: every head has four, named `hook_name(layer, head, point)`:
"q", "k" and "v" are the residual stream (B, T, D) that the head reads for its query, key and value, and "out"
is the head's output (B, T, d_k) before W_O. A hook is a function that takes the tensor and returns the one the
forward pass goes on with; ablation, patching and recording are all hooks. With no hook at a point the forward
pass is the plain one, bit for bit. A `KVCache` lets the same forward pass take only the newest tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import torch
from torch import nn

from attnlab.attention import AttentionSteps, attention_steps

POINTS = ("q", "k", "v", "out")  # a head's three inputs, then its output
Hook = Callable[[torch.Tensor], torch.Tensor]
Hooks = Mapping[str, Hook]
NO_HOOKS: Hooks = MappingProxyType({})  # a read-only empty default


def hook_name(layer: int, head: int, point: str) -> str:
    """The name of one head's hook point, e.g. 'blocks.1.0.k': layer 1, head 0, its key input."""
    return f"blocks.{layer}.{head}.{point}"


def zero_heads(ablate) -> dict[str, Hook]:
    """Ablation as hooks: each (layer, head) pair's output replaced by zeros."""
    return {hook_name(int(ly), int(hd), "out"): torch.zeros_like for ly, hd in ablate}


@dataclass(frozen=True)
class Config:
    """Shape of one decoder: layers, heads, width and the longest input (start marker included)."""

    n_layers: int
    n_heads: int
    d_model: int
    n_vocab: int  # symbols a user may type; the start marker is one more input id
    max_len: int


@dataclass
class KVCache:
    """Every layer's keys and values so far, (B, H, t, d_k) each; the forward pass appends the new rows.

    With a `window`, the cache keeps only the first `sinks` tokens and the last `window` (StreamingLLM's cache):
    `positions` says which positions of the sequence its rows are, and `fed` how many tokens it has been given.
    """

    keys: list[torch.Tensor] = field(default_factory=list)
    values: list[torch.Tensor] = field(default_factory=list)
    window: int | None = None
    sinks: int = 0
    positions: list[int] = field(default_factory=list)
    fed: int = 0

    @property
    def length(self) -> int:
        """Tokens in the cache now (without a window, the next token's position)."""
        return self.keys[0].size(-2) if self.keys else 0

    @property
    def next_position(self) -> int:
        """The position in the sequence of the next token fed."""
        return self.length if self.window is None else self.fed

    def rule(self, new: torch.Tensor, cached: torch.Tensor) -> torch.Tensor:
        """(T_new, t) bool, True = may attend: a key at or before the query, among its last `window` or a sink."""
        q, k = new[:, None], cached[None, :]
        return (k <= q) & ((q - k < self.window) | (k < self.sinks))


class AttnOnly(nn.Module):
    """Token + position embedding, L causal attention layers added to the residual, then unembed."""

    def __init__(self, cfg: Config, gen: torch.Generator | None = None):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model

        def randn(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, generator=gen)

        self.embed = nn.Parameter(randn(cfg.n_vocab + 1, d) * 0.02)
        self.pos = nn.Parameter(randn(cfg.max_len, d) * 0.02)
        self.w_qkv = nn.Parameter(randn(cfg.n_layers, d, 3 * d) * d**-0.5)
        self.w_o = nn.Parameter(randn(cfg.n_layers, d, d) * d**-0.5 / cfg.n_layers)
        self.unembed = nn.Parameter(randn(d, cfg.n_vocab) * d**-0.5)

    def check_hooks(self, hooks: Hooks) -> None:
        """Refuse a hook at a point this model does not have (a typo would otherwise patch nothing)."""
        known = {
            hook_name(ly, h, p) for ly in range(self.cfg.n_layers) for h in range(self.cfg.n_heads) for p in POINTS
        }
        unknown = sorted(set(hooks) - known)
        if unknown:
            raise ValueError(f"no hook point named {unknown[0]!r}; points look like {hook_name(0, 0, 'k')!r}")

    def qkv(self, x: torch.Tensor, layer: int, hooks: Hooks) -> torch.Tensor:
        """Q, K, V of every head (3, B, H, T, d_k); a head whose input is hooked reads the hooked stream."""
        b, t, d = x.shape
        h, dk = self.cfg.n_heads, d // self.cfg.n_heads
        qkv = (x @ self.w_qkv[layer]).view(b, t, 3, h, dk).permute(2, 0, 3, 1, 4)  # (3, B, H, T, d_k)
        hooked = [
            (i, hd, hooks[n]) for i, p in enumerate("qkv") for hd in range(h) if (n := hook_name(layer, hd, p)) in hooks
        ]
        if not hooked:
            return qkv
        rows = [[qkv[i, :, hd] for hd in range(h)] for i in range(3)]
        for i, hd, hook in hooked:
            cols = slice(i * d + hd * dk, i * d + (hd + 1) * dk)
            rows[i][hd] = hook(x) @ self.w_qkv[layer][:, cols]  # (B, T, d_k)
        return torch.stack([torch.stack(r, 1) for r in rows])

    def layer_steps(
        self, x: torch.Tensor, layer: int, hooks: Hooks = NO_HOOKS, cache: KVCache | None = None
    ) -> AttentionSteps:
        """One layer's attention stages for residual x (B, T, D), heads split as (B, H, T, d_k).

        With a cache, x holds only the new tokens: their keys and values are appended to the cache's and their
        queries attend over all of it (causal within the new rows, bottom-right aligned).
        """
        q, k, v = self.qkv(x, layer, hooks)
        if cache is None:
            return attention_steps(q, k, v, is_causal=True)
        if layer == len(cache.keys):  # this layer's first tokens
            cache.keys.append(k[..., :0, :])
            cache.values.append(v[..., :0, :])
        if cache.window is not None:
            return self.window_steps(q, k, v, layer, cache)
        k = cache.keys[layer] = torch.cat([cache.keys[layer], k], -2)  # (B, H, t, d_k)
        v = cache.values[layer] = torch.cat([cache.values[layer], v], -2)
        t_new, t_all = q.size(-2), k.size(-2)
        if t_new == t_all:
            return attention_steps(q, k, v, is_causal=True)
        mask = None if t_new == 1 else torch.ones(t_new, t_all, dtype=torch.bool).tril(t_all - t_new)
        return attention_steps(q, k, v, attn_mask=mask)

    @staticmethod
    def window_steps(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, layer: int, cache: KVCache) -> AttentionSteps:
        """The new tokens' queries over what the window cache holds at each one's turn; the cache then keeps the sinks
        and the last `window` tokens (the newest included).

        One new token: the token that falls out of its window is evicted first, and the query attends to all the
        cache holds (no mask). Several (the prompt): their stages cover the cache before eviction plus the new rows,
        each query's keys outside its window blocked, and the eviction follows.
        """
        new = torch.arange(cache.fed, cache.fed + q.size(-2))  # (T_new,): the new tokens' positions
        pos = torch.cat([torch.tensor(cache.positions, dtype=torch.long), new])  # (t,)
        k = torch.cat([cache.keys[layer], k], -2)  # (B, H, t, d_k)
        v = torch.cat([cache.values[layer], v], -2)
        keep = (pos < cache.sinks) | (pos > new[-1] - cache.window)
        if q.size(-2) == 1:
            k, v = k[..., keep, :], v[..., keep, :]
            steps = attention_steps(q, k, v)
        else:
            steps = attention_steps(q, k, v, attn_mask=cache.rule(new, pos))
            k, v = k[..., keep, :], v[..., keep, :]
        cache.keys[layer], cache.values[layer] = k, v
        return steps

    def forward(
        self, ids: torch.Tensor, ablate=(), hooks: Hooks | None = None, cache: KVCache | None = None
    ) -> tuple[torch.Tensor, list[AttentionSteps]]:
        """Logits (B, T, V) and every layer's attention stages; ablated (layer, head) outputs are zeroed."""
        x, steps = self.residual(ids, self.cfg.n_layers, ablate, hooks, cache)
        return x @ self.unembed, steps

    def residual(
        self, ids: torch.Tensor, upto: int, ablate=(), hooks: Hooks | None = None, cache: KVCache | None = None
    ) -> tuple[torch.Tensor, list[AttentionSteps]]:
        """The residual stream entering layer `upto` (B, T, D) and the attention stages of the layers before it."""
        hooks = {**zero_heads(ablate), **(hooks or {})}
        self.check_hooks(hooks)
        start = 0 if cache is None else cache.next_position
        x = self.embed[ids] + self.pos[start : start + ids.size(1)]  # (B, T, D)
        steps = []
        for layer in range(upto):
            s = self.layer_steps(x, layer, hooks, cache)
            x = x + self.heads_concat(s, layer, hooks) @ self.w_o[layer]
            steps.append(s)
        if cache is not None and cache.window is not None:  # every layer has evicted the same positions
            seen = [*cache.positions, *range(start, start + ids.size(1))]
            last = seen[-1]
            cache.positions = [p for p in seen if p < cache.sinks or p > last - cache.window]
            cache.fed = start + ids.size(1)
        return x, steps

    def heads_concat(self, s: AttentionSteps, layer: int, hooks: Hooks = NO_HOOKS) -> torch.Tensor:
        """One layer's head outputs side by side (B, T, D), each through its "out" hook: what W_O reads."""
        b, _, t, _ = s.output.shape
        out = s.output  # (B, H, T, d_k)
        names = [hook_name(layer, hd, "out") for hd in range(self.cfg.n_heads)]
        if any(n in hooks for n in names):
            out = torch.stack([hooks[n](out[:, hd]) if n in hooks else out[:, hd] for hd, n in enumerate(names)], 1)
        return out.transpose(1, 2).reshape(b, t, -1)
