"""The rule a file's scores follow, per layer: softmax(cap(q·kᵀ·scale) + mask) over grouped key/value heads.

A layer's score for query head h is q_h · k_{h // g} · scale, where g = H / H_kv query heads share each key/value head
(transformers' `repeat_kv`, SDPA's `enable_gqa`). Where the layer soft-caps its logits (Gemma 2) the score becomes
cap · tanh(s / cap) before the mask. The mask is one of three: every key (full), the keys up to the query (causal),
or only the last `window` of those (a causal sliding window, Mistral's: query i sees key j when i - W < j <= i).
A file states the scale (default 1/√d), the cap (default none) and the window (default none) per layer.
"""

from __future__ import annotations

import torch

from attnlab import masks


def kv_head(head: int, n_heads: int, n_kv_heads: int) -> int:
    """The key/value head that query head `head` reads: head // (H / H_kv)."""
    return head // (n_heads // n_kv_heads)


def grouping(n_heads: int, n_kv_heads: int) -> list[int]:
    """The key/value head of every query head, as a file states it (`kv_head_of`)."""
    return [kv_head(h, n_heads, n_kv_heads) for h in range(n_heads)]


def visible(t_q: int, t_k: int, causal: bool, window: int | None = None) -> torch.Tensor:
    """(T_q, T_k) bool, True = the query may see the key: full, causal, or a causal window of `window` keys."""
    if window is not None:
        return masks.build("window", t_q, t_k, window=window)
    return masks.build("causal" if causal else "full", t_q, t_k)


def weights(
    queries: torch.Tensor,
    keys: torch.Tensor,
    scale: float,
    softcap: float | None = None,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """softmax(cap(q·kᵀ·scale) + mask): queries (..., H, T_q, d), keys (..., H_kv, T_k, d) -> (..., H, T_q, T_k).

    `mask` is bool (True = may attend) or additive float, broadcast over heads; a row that sees no key gets zeros.
    The key heads are broadcast over their groups of query heads, never copied (a capture runs this per layer).
    """
    n_heads, n_kv_heads = queries.size(-3), keys.size(-3)
    q = queries.unflatten(-3, (n_kv_heads, n_heads // n_kv_heads))  # (..., H_kv, g, T_q, d): head h = kv * g + i
    scores = torch.matmul(q, keys.unsqueeze(-3).transpose(-2, -1)).flatten(-4, -3).mul_(scale)  # (..., H, T_q, T_k)
    if softcap is not None:
        scores = scores.div_(softcap).tanh_().mul_(softcap)
    if mask is not None and mask.dtype == torch.bool:
        return scores.masked_fill_(~mask, float("-inf")).softmax(dim=-1).nan_to_num_(0.0)
    if mask is not None:
        scores = scores.add_(mask)
    return scores.softmax(dim=-1)  # an additive mask's blocked keys hold a finite lowest number: no row is empty


def infer(allowed: torch.Tensor | None, t_q: int, t_k: int, declared: int | None = None) -> tuple[bool, int | None]:
    """The (causal, window) a (T_q, T_k) bool mask follows (None: no mask, every key); ValueError if none fits.

    `declared` is the window the model says it uses (transformers' `sliding_window` argument): kept when the mask
    follows it, even where it is longer than the text and so blocks nothing here.
    """
    if allowed is None or bool(allowed.all()):
        return False, None
    candidates = [(True, None)]
    if declared is not None and declared >= 1:
        candidates.insert(0, (True, int(declared)))
    widest = int(allowed.sum(dim=-1).max())
    if widest >= 1:
        candidates.append((True, widest))
    for causal, window in candidates:
        if torch.equal(allowed, visible(t_q, t_k, causal, window)):
            return causal, window
    raise ValueError("the mask is neither full, causal nor a causal sliding window")


def layer_weights(file, layer: int) -> torch.Tensor:
    """(H, T_q, T_k): the weights a file's queries and keys give for one layer under its stated rule."""
    if file.queries is None or file.keys is None:
        raise ValueError("the file has no queries and keys")
    scale, softcap, window = file.rule(layer)
    t_q, t_k = file.attentions.shape[-2:]
    allowed = visible(t_q, t_k, file.causal, window)
    return weights(file.queries[layer], file.keys[layer], scale, softcap, allowed)
