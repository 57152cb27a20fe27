"""Attention-only causal decoders whose every head goes through attnlab's own attention."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnlab.attention import AttentionSteps, attention_steps


@dataclass(frozen=True)
class Config:
    """Shape of one decoder: layers, heads, width and the longest input (start marker included)."""

    n_layers: int
    n_heads: int
    d_model: int
    n_vocab: int  # symbols a user may type; the start marker is one more input id
    max_len: int


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

    def layer_steps(self, x: torch.Tensor, layer: int) -> AttentionSteps:
        """One layer's attention stages for residual x (B, T, D), heads split as (B, H, T, d_k)."""
        b, t, d = x.shape
        h = self.cfg.n_heads
        qkv = (x @ self.w_qkv[layer]).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)  # (3, B, H, T, d_k)
        return attention_steps(qkv[0], qkv[1], qkv[2], is_causal=True)

    def forward(self, ids: torch.Tensor, ablate=()) -> tuple[torch.Tensor, list[AttentionSteps]]:
        """Logits (B, T, V) and every layer's attention stages; ablated (layer, head) outputs are zeroed."""
        x, steps = self.residual(ids, self.cfg.n_layers, ablate)
        return x @ self.unembed, steps

    def residual(self, ids: torch.Tensor, upto: int, ablate=()) -> tuple[torch.Tensor, list[AttentionSteps]]:
        """The residual stream entering layer `upto` (B, T, D) and the attention stages of the layers before it."""
        x = self.embed[ids] + self.pos[: ids.size(1)]  # (B, T, D)
        steps = []
        for layer in range(upto):
            s = self.layer_steps(x, layer)
            x = x + self.heads_concat(s, layer, ablate) @ self.w_o[layer]
            steps.append(s)
        return x, steps

    def heads_concat(self, s: AttentionSteps, layer: int, ablate=()) -> torch.Tensor:
        """One layer's head outputs side by side (B, T, D), its ablated heads zeroed: what W_O reads."""
        b, _, t, _ = s.output.shape
        out = s.output  # (B, H, T, d_k)
        off = [hd for (ly, hd) in ablate if ly == layer]
        if off:
            keep = torch.ones(self.cfg.n_heads, dtype=out.dtype)
            keep[off] = 0.0
            out = out * keep[None, :, None, None]
        return out.transpose(1, 2).reshape(b, t, -1)
