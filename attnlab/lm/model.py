"""LlamaForCausalLM as nn.Modules named as transformers names them, every head through attnlab's own attention.

RMSNorm, rotary positions (rotate-half, attnlab.positions.rope with the config's θ), grouped key/value heads (query
head h reads key/value head h // group, as transformers' repeat_kv does), SwiGLU, tied or separate unembedding.
The module tree spells transformers' tensor names (`model.layers.0.self_attn.q_proj.weight`, ...), so a state dict
goes to and from model.safetensors unchanged.

Hook points as in the trained decoders (contract 8), `blocks.<layer>.<head>.<point>` for every query head:
"q", "k" and "v" are the normed residual stream (B, T, D) that the head's projection reads (what input_layernorm
gives), "out" is the head's output (B, T, d) before o_proj. A hooked k or v input gives that query head its own
copy of its key/value head; the cache stores shared key/value heads, so k and v hooks are refused with a cache.
Training takes the `fused` path (PyTorch's SDPA kernel, no stages kept, no hooks): the same function, about half
the time; a test holds the two paths together. Every pass a person sees goes through `attention_steps`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
import torch.nn.functional as F
from torch import nn

from attnlab.attention import AttentionSteps, attention_steps
from attnlab.lm.cache import Cache, allowed
from attnlab.lm.config import LMConfig
from attnlab.multihead import repeat_kv
from attnlab.positions import rope

POINTS = ("q", "k", "v", "out")
Hook = Callable[[torch.Tensor], torch.Tensor]
Hooks = Mapping[str, Hook]


def hook_name(layer: int, head: int, point: str) -> str:
    """One head's hook point, e.g. 'blocks.1.0.k': layer 1, query head 0, its key input."""
    return f"blocks.{layer}.{head}.{point}"


class RMSNorm(nn.Module):
    """x / rms(x) * weight, the mean over the last dimension; no centring and no bias (Zhang and Sennrich)."""

    def __init__(self, d: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised x (..., D)."""
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        d, i = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj, self.up_proj = nn.Linear(d, i, bias=False), nn.Linear(d, i, bias=False)
        self.down_proj = nn.Linear(i, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> (B, T, D)."""
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Attention(nn.Module):
    """One layer's grouped-query attention with RoPE; the projections carry transformers' names."""

    def __init__(self, cfg: LMConfig, layer: int):
        super().__init__()
        d, hd = cfg.hidden_size, cfg.head_dim
        self.cfg, self.layer, self.slide = cfg, layer, cfg.windows[layer]
        self.q_proj = nn.Linear(d, cfg.num_attention_heads * hd, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(d, cfg.num_key_value_heads * hd, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(d, cfg.num_key_value_heads * hd, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(cfg.num_attention_heads * hd, d, bias=cfg.o_bias)

    def heads(self, x: torch.Tensor, proj: nn.Linear, pos: torch.Tensor, turn: bool) -> torch.Tensor:
        """x (B, T, D) through a projection, split into heads (B, n, T, d), rotated when `turn`."""
        b, t, _ = x.shape
        out = proj(x).view(b, t, -1, self.cfg.head_dim).transpose(1, 2)
        return rope(out, pos, base=self.cfg.rope_theta) if turn else out

    def one_head(self, x: torch.Tensor, proj: nn.Linear, head: int, pos: torch.Tensor, turn: bool) -> torch.Tensor:
        """One head's rows of a projection applied to (hooked) x: (B, T, d)."""
        hd = self.cfg.head_dim
        rows = slice(head * hd, (head + 1) * hd)
        bias = None if proj.bias is None else proj.bias[rows]
        out = F.linear(x, proj.weight[rows], bias)
        return rope(out, pos, base=self.cfg.rope_theta) if turn else out

    def qkv(self, x: torch.Tensor, pos: torch.Tensor, hooks: Hooks):
        """Queries (B, H, T, d), keys and values (B, H_kv, T, d), and {(point, head): tensor} for hooked inputs."""
        q, k = self.heads(x, self.q_proj, pos, True), self.heads(x, self.k_proj, pos, True)
        v = self.heads(x, self.v_proj, pos, False)
        own = {}
        for h in range(self.cfg.num_attention_heads):
            for point, proj, turn in (("q", self.q_proj, True), ("k", self.k_proj, True), ("v", self.v_proj, False)):
                name = hook_name(self.layer, h, point)
                if name in hooks:
                    kv_head = h if point == "q" else h // self.cfg.group
                    own[point, h] = self.one_head(hooks[name](x), proj, kv_head, pos, turn)
        return q, k, v, own

    def forward(
        self, x: torch.Tensor, pos: torch.Tensor, hooks: Hooks, cache: Cache | None, keep: bool, fused: bool, parts=None
    ):
        """x (B, T, D) normed -> (what o_proj adds (B, T, D), attention weights (B, H, T, T_k), stages or None);
        `parts` (a dict) takes the heads' outputs (B, H, T, d) that o_proj reads, as `<layer>.heads`."""
        b, t, _ = x.shape
        q, k, v, own = self.qkv(x, pos, hooks)
        if fused:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            return self.o_proj(out.transpose(1, 2).reshape(b, t, -1)), None, None
        if cache is not None and any(p != "q" for p, _ in own):
            raise ValueError("k and v hooks cannot be used with a cache: it stores shared key/value heads")
        k_pos = pos
        if cache is not None:
            k, v, k_pos = cache.extend(self.layer, k, v, evict_first=t == 1)
        k, v = repeat_kv(k, self.cfg.group), repeat_kv(v, self.cfg.group)  # (B, H, T_k, d)
        qkv = {"q": q, "k": k, "v": v}
        for (point, h), value in own.items():
            qkv[point] = qkv[point].clone()  # a hooked head changes only its own copy
            qkv[point][:, h] = value
        q, k, v = qkv["q"], qkv["k"], qkv["v"]
        steps = self.attend(q, k, v, pos, k_pos, cache)
        out = steps.output  # (B, H, T, d)
        names = [hook_name(self.layer, h, "out") for h in range(self.cfg.num_attention_heads)]
        if any(n in hooks for n in names):
            out = torch.stack([hooks[n](out[:, h]) if n in hooks else out[:, h] for h, n in enumerate(names)], 1)
        if parts is not None:
            parts[f"{self.layer}.heads"] = out
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1)), steps.weights, steps if keep else None

    def attend(self, q, k, v, pos: torch.Tensor, k_pos: torch.Tensor, cache: Cache | None) -> AttentionSteps:
        """attention_steps with the rule this layer and the cache allow; plain is_causal when that is the rule."""
        window, sinks = (None, 0) if cache is None else (cache.window, cache.sinks)
        if window is None and self.slide is None and torch.equal(pos, k_pos):
            return attention_steps(q, k, v, is_causal=True)
        mask = allowed(pos, k_pos, window, sinks, self.slide)
        return attention_steps(q, k, v, attn_mask=None if bool(mask.all()) else mask)


class DecoderLayer(nn.Module):
    """x + attention(norm(x)), then + SwiGLU(norm(x))."""

    def __init__(self, cfg: LMConfig, layer: int):
        super().__init__()
        self.self_attn = Attention(cfg, layer)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Body(nn.Module):
    """Embedding, layers, final norm: transformers' `model.` prefix."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Llama(nn.Module):
    """The causal LM; `forward` returns logits (B, T, V), every layer's weights (B, H, T, T_k) and stages if kept."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.cfg = cfg
        self.model = Body(cfg)
        if not cfg.tie_word_embeddings:
            self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def unembed(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> logits (B, T, V): the tied embedding, or lm_head."""
        w = self.model.embed_tokens.weight if self.cfg.tie_word_embeddings else self.lm_head.weight
        return x @ w.T

    def check_hooks(self, hooks: Hooks) -> None:
        """Refuse a hook at a point the model lacks (a typo would otherwise patch nothing)."""
        cfg = self.cfg
        known = {
            hook_name(ly, h, p)
            for ly in range(cfg.num_hidden_layers)
            for h in range(cfg.num_attention_heads)
            for p in POINTS
        }
        unknown = sorted(set(hooks) - known)
        if unknown:
            raise ValueError(f"no hook point named {unknown[0]!r}; points look like {hook_name(0, 0, 'k')!r}")

    def forward(
        self,
        ids: torch.Tensor,
        hooks: Hooks | None = None,
        cache: Cache | None = None,
        *,
        keep_steps: bool = False,
        fused: bool = False,
        parts: dict[str, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[AttentionSteps] | None]:
        """ids (B, T) -> logits (B, T, V), weights per layer, stages per layer (when `keep_steps`).

        With a cache, ids are only the new tokens: they take the positions after what the cache was fed. `parts` (a
        dict, filled in place) takes what each piece writes into the residual stream, (B, T, D) each: "embed", and
        per layer "<L>.attn" and "<L>.mlp", with "<L>.heads" (B, H, T, d), the heads' outputs o_proj reads.
        """
        hooks = hooks or {}
        if hooks:
            self.check_hooks(hooks)
        if fused and (hooks or cache is not None or keep_steps or parts is not None):
            raise ValueError("the fused (training) path takes no hooks, cache, stages or parts")
        start = 0 if cache is None else cache.fed
        pos = torch.arange(start, start + ids.size(1))
        x = self.model.embed_tokens(ids)  # (B, T, D)
        if parts is not None:
            parts["embed"] = x
        weights, steps = [], []
        for i, layer in enumerate(self.model.layers):
            add, w, s = layer.self_attn(layer.input_layernorm(x), pos, hooks, cache, keep_steps, fused, parts)
            x = x + add
            mlp = layer.mlp(layer.post_attention_layernorm(x))
            x = x + mlp
            if parts is not None:
                parts[f"{i}.attn"], parts[f"{i}.mlp"] = add, mlp
            weights.append(w)
            steps.append(s)
        if cache is not None:
            cache.commit(ids.size(1))
        return self.unembed(self.model.norm(x)), weights, steps if keep_steps else None
