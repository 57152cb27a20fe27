"""The Cross-attention page's math: a causal decoder whose queries read the source, padding, the bottleneck.

Pure torch. A `CrossResult` carries its config and both sets of weights, so the PyTorch check reads them
instead of drawing them again.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.attention import causal_mask
from attnlab.limits import MAX_TOKENS
from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, multi_head_steps
from attnlab.tokens import embed, tokenize


@dataclass(frozen=True)
class CrossConfig:
    """Everything that determines the Cross-attention page's matrices."""

    source: str = "I love machine learning <pad> <pad>"
    target: str = "我爱机器学习"
    causal: bool = True
    pad: tuple[int, ...] = (4, 5)  # source positions hidden by the padding mask
    d_model: int = 8
    heads: int = 2
    seed: int = 0


@dataclass(frozen=True)
class Bottleneck:
    """One fixed context c for the whole source, against one context c_i per target token."""

    c: torch.Tensor  # (d_model,) mean of the visible encoder states
    contexts: torch.Tensor  # (T_tgt, d_model) c_i = sum_j a_ij h_j with the head-averaged weights
    weights: torch.Tensor  # (T_tgt, T_src) head-averaged cross-attention weights
    distance: torch.Tensor  # (T_tgt,) |c_i - c|
    cosine: torch.Tensor  # (T_tgt,) cos(c_i, c)
    spread: float  # mean |c_i - mean_i c_i|: how different the c_i are from each other


@dataclass(frozen=True)
class CrossResult:
    """The decoder's masked self-attention, its cross-attention to the source, and the bottleneck."""

    source: list[str]
    target: list[str]
    n_source_typed: int
    n_target_typed: int
    pad: tuple[int, ...]  # the padded positions actually used (inside the source)
    keep: torch.Tensor  # (T_src,) bool: True = the source token may be attended to
    x_src: torch.Tensor  # (T_src, d_model) encoder states h_j
    x_tgt: torch.Tensor  # (T_tgt, d_model) target embeddings
    decoder: MultiHeadSteps  # target self-attention (causal when asked)
    h_tgt: torch.Tensor  # (T_tgt, d_model) x_tgt + decoder output: where the queries come from
    cross: MultiHeadSteps  # Q from h_tgt, K and V from x_src; scores (H, T_tgt, T_src)
    bottleneck: Bottleneck | None  # None when the padding hides every source token
    config: CrossConfig
    w_self: MultiHeadWeights  # the decoder's self-attention
    w_cross: MultiHeadWeights  # cross-attention (a different draw)

    @property
    def all_hidden(self) -> bool:
        """True when the padding mask hides every source token (every row then sees nothing)."""
        return not bool(self.keep.any())


def cross_weights(d_model: int, seed: int) -> tuple[MultiHeadWeights, MultiHeadWeights]:
    """Seeded weights for the decoder's self-attention and for its cross-attention (a different draw)."""
    return MultiHeadWeights.random(d_model, seed=seed), MultiHeadWeights.random(d_model, seed=seed + 1)


def padding_keep(n_source: int, pad: tuple[int, ...]) -> torch.Tensor:
    """(T_src,) bool, True where the source token is not padding."""
    keep = torch.ones(n_source, dtype=torch.bool)
    for j in pad:
        if 0 <= j < n_source:
            keep[j] = False
    return keep


def bottleneck(states: torch.Tensor, weights: torch.Tensor, keep: torch.Tensor) -> Bottleneck | None:
    """c = mean of the visible encoder states h_j; c_i = sum_j a_ij h_j for every target token i."""
    if not bool(keep.any()):
        return None
    c = states[keep].mean(dim=0)
    contexts = weights @ states  # (T_tgt, d_model)
    distance = (contexts - c).norm(dim=-1)
    cosine = F.cosine_similarity(contexts, c[None].expand_as(contexts), dim=-1)
    spread = float((contexts - contexts.mean(dim=0)).norm(dim=-1).mean())
    return Bottleneck(c, contexts, weights, distance, cosine, spread)


def run_cross(config: CrossConfig) -> CrossResult:
    """Embed both texts, run the decoder's self-attention, then cross-attention to the source."""
    src_typed, tgt_typed = tokenize(config.source), tokenize(config.target)
    source, target = src_typed[:MAX_TOKENS], tgt_typed[:MAX_TOKENS]
    pad = tuple(sorted({j for j in config.pad if 0 <= j < len(source)}))
    keep = padding_keep(len(source), pad)
    x_src = embed(source, config.d_model, config.seed)
    x_tgt = embed(target, config.d_model, config.seed)
    w_self, w_cross = cross_weights(config.d_model, config.seed)
    decoder = multi_head_steps(x_tgt, x_tgt, w_self, config.heads, is_causal=config.causal)
    h_tgt = x_tgt + decoder.output
    mask = keep[None, :].expand(len(target), len(source))  # True = may attend
    cross = multi_head_steps(h_tgt, x_src, w_cross, config.heads, attn_mask=mask)
    averaged = cross.heads.weights.mean(dim=0)  # (T_tgt, T_src)
    return CrossResult(
        source,
        target,
        len(src_typed),
        len(tgt_typed),
        pad,
        keep,
        x_src,
        x_tgt,
        decoder,
        h_tgt,
        cross,
        bottleneck(x_src, averaged, keep),
        config,
        w_self,
        w_cross,
    )


@dataclass(frozen=True)
class CrossCheck:
    """Our cross-attention against SDPA (per head, same mask) and nn.MultiheadAttention."""

    sdpa: float  # max |ours - SDPA| over heads
    mha: float  # max |ours - nn.MultiheadAttention(key_padding_mask)|; NaN when every key is hidden
    decoder: float  # the decoder's self-attention against nn.MultiheadAttention


def check_cross(result: CrossResult) -> CrossCheck:
    """Hold both attentions of the Cross-attention page against PyTorch, with the weights the result used."""
    config, w_self, w_cross = result.config, result.w_self, result.w_cross
    heads = result.cross.heads
    mask = result.keep[None, :].expand(len(result.target), len(result.source))
    sdpa = F.scaled_dot_product_attention(heads.q, heads.k, heads.v, attn_mask=mask)
    t = len(result.target)
    with torch.no_grad():
        mha = w_cross.to_torch(config.heads)
        ref, _ = mha(result.h_tgt[None], result.x_src[None], result.x_src[None], key_padding_mask=~result.keep[None])
        dec = w_self.to_torch(config.heads)
        blocked = ~causal_mask(t, t) if config.causal else None
        ref_dec, _ = dec(result.x_tgt[None], result.x_tgt[None], result.x_tgt[None], attn_mask=blocked)
    return CrossCheck(
        float((sdpa - heads.output).abs().max()),
        float((ref[0] - result.cross.output).abs().max()),
        float((ref_dec[0] - result.decoder.output).abs().max()),
    )
