"""The anatomy of attention, pure torch: heads, fused QKV, dropout, cross-attention and one neuron.

What the Multi-head, Cross-attention and Neuron pages compute. No Streamlit, no Plotly: every
function here takes tensors (or a small config) and returns tensors, so tests can hold each
number against PyTorch.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.attention import causal_mask, default_scale, stable_softmax
from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, check_heads, merge_heads, multi_head_steps, split_heads
from attnlab.tokens import MAX_TOKENS, embed, tokenize

# --------------------------------------------------------------------------- multi-head


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

    @property
    def zeroed(self) -> int:
        """How many non-zero weights dropout set to 0."""
        heads = self.steps.heads
        return int(((heads.weights > 0) & (heads.dropped == 0)).sum())

    @property
    def kept_scale(self) -> float:
        """What a kept weight is multiplied by: 1 / (1 - p)."""
        return 1.0 / (1.0 - self.p)


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
    return DropoutResult(ours, p, seed, check)


# --------------------------------------------------------------------------- cross-attention


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
    )


@dataclass(frozen=True)
class CrossCheck:
    """Our cross-attention against SDPA (per head, same mask) and nn.MultiheadAttention."""

    sdpa: float  # max |ours - SDPA| over heads
    mha: float  # max |ours - nn.MultiheadAttention(key_padding_mask)|; NaN when every key is hidden
    decoder: float  # the decoder's self-attention against nn.MultiheadAttention


def check_cross(result: CrossResult, config: CrossConfig) -> CrossCheck:
    """Hold both attentions of the Cross-attention page against PyTorch."""
    w_self, w_cross = cross_weights(config.d_model, config.seed)
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


# --------------------------------------------------------------------------- neuron view


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
) -> Neuron:
    """Decompose row i of softmax(q k^T * scale + M) v for one head: q (T_q, d_k), k (T_k, d_k), v (T_k, d_v).

    `is_causal` blocks keys after i (SDPA's top-left alignment); `keep` (T_k,) bool blocks keys
    where it is False.
    """
    if not 0 <= i < q.size(0):
        raise IndexError(f"query {i} outside 0..{q.size(0) - 1}")
    scale = default_scale(q, scale)
    q_i = q[i]
    products = q_i[None, :] * k
    dots = products.sum(dim=-1)
    scaled = dots * scale
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
