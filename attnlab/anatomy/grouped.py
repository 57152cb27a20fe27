"""The Multi-head page's comparison of MHA, GQA and MQA on the same input: K/V sizes, cache bytes, output changes.

Choice taken (the issue left it open): the grouped variants are converted from the multi-head weights the page
shows, as Ainslie et al. (2023) convert a checkpoint: each group's W_K and W_V columns are mean-pooled into one
key/value head (`attnlab.multihead.pool_kv`), W_Q and W_O stay. So the differences shown are what sharing costs
before any uptraining, not the gap between two unrelated random models.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, check_heads, check_kv_heads, multi_head_steps, pool_kv

BYTES_PER_NUMBER = 2  # a served model keeps its cache in float16 or bfloat16


@dataclass(frozen=True)
class Variant:
    """One way of sharing keys and values: its weights, its run, and how far its output is from MHA's."""

    name: str  # "mha", "gqa" or "mqa"
    n_kv_heads: int
    weights: MultiHeadWeights  # W_K, W_V (d_model, n_kv_heads * d_k)
    steps: MultiHeadSteps
    diff: torch.Tensor  # (T, d_model): output - MHA's output
    max_diff: float  # max |diff|
    rel_diff: float  # ||diff|| / ||MHA's output|| (Frobenius); 0 when MHA's output is 0

    @property
    def group(self) -> int:
        """Query heads that read each key/value head."""
        return self.steps.group

    def kv_numbers_per_token(self) -> int:
        """Numbers one token adds to one layer's cache: a key and a value of n_kv_heads * d_k each."""
        return cache_bytes_per_token(self.n_kv_heads, self.steps.d_k, 1)

    def cache_bytes_per_token(self, bytes_per_number: int = BYTES_PER_NUMBER) -> int:
        """Bytes one token adds to one layer's cache."""
        return cache_bytes_per_token(self.n_kv_heads, self.steps.d_k, bytes_per_number)


@dataclass(frozen=True)
class Comparison:
    """MHA, then GQA and MQA where they differ from it, all on the same x, W_Q and W_O."""

    n_heads: int
    tokens: int
    variants: tuple[Variant, ...]

    @property
    def mha(self) -> Variant:
        """The multi-head variant every other is measured against."""
        return self.variants[0]


def cache_bytes_per_token(n_kv_heads: int, d_k: int, bytes_per_number: int = BYTES_PER_NUMBER) -> int:
    """Bytes one token adds to one layer's key/value cache: 2 (a key and a value) * n_kv_heads * d_k * bytes."""
    return 2 * n_kv_heads * d_k * bytes_per_number


def sharing(n_heads: int, n_kv_heads: int) -> list[list[int]]:
    """For each key/value head, the query heads that read it (h // (n_heads / n_kv_heads), as SDPA's enable_gqa)."""
    check_kv_heads(n_heads, n_kv_heads)
    group = n_heads // n_kv_heads
    return [list(range(j * group, (j + 1) * group)) for j in range(n_kv_heads)]


def grouped_weights(weights: MultiHeadWeights, n_heads: int, n_kv_heads: int) -> MultiHeadWeights:
    """Square multi-head weights converted to n_kv_heads key/value heads by mean-pooling each group (Ainslie et al.)."""
    if weights.grouped:
        raise ValueError("grouped_weights converts square multi-head weights; these already share key/value heads")
    if n_kv_heads == n_heads:
        return weights
    return weights.replace(w_k=pool_kv(weights.w_k, n_heads, n_kv_heads), w_v=pool_kv(weights.w_v, n_heads, n_kv_heads))


def compare(
    x: torch.Tensor, weights: MultiHeadWeights, n_heads: int, gqa_kv_heads: int, *, is_causal: bool = False
) -> Comparison:
    """Self-attention of x (T, d_model) with H, `gqa_kv_heads` and 1 key/value heads; repeated counts run once."""
    check_heads(weights.d_model, n_heads)
    check_kv_heads(n_heads, gqa_kv_heads)
    counts = {"mha": n_heads, "gqa": gqa_kv_heads, "mqa": 1}
    kept = [(name, n) for i, (name, n) in enumerate(counts.items()) if n not in list(counts.values())[:i]]
    variants: list[Variant] = []
    for name, n_kv in kept:
        w = grouped_weights(weights, n_heads, n_kv)
        steps = multi_head_steps(x, x, w, n_heads, n_kv_heads=n_kv, is_causal=is_causal)
        base = variants[0].steps.output if variants else steps.output
        diff = steps.output - base  # (T, d_model)
        norm = float(base.norm())
        rel = float(diff.norm()) / norm if norm else 0.0
        variants.append(Variant(name, n_kv, w, steps, diff, float(diff.abs().max()) if diff.numel() else 0.0, rel))
    return Comparison(n_heads, x.size(-2), tuple(variants))
