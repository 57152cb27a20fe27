"""The sampler's distribution: temperature, then top-k, then top-p, renormalised (contract 19).

The order is the one transformers' logits warpers apply (temperature, top-k, top-p): top-p reads the distribution
that top-k left, renormalised. Top-k keeps the k likeliest tokens; top-p keeps the smallest set of likeliest tokens
whose probability reaches p (p = 1 keeps every token). Ties are broken by the lower id (a stable sort), so the kept
set is one set, the same on every machine. A token of probability 0 (a banned id: <bos> and <unk> when generating)
is never kept nor counted. Temperature 0 is greedy: the draw is the argmax, and the distribution shown is the model's
own (temperature 1) under the same cuts, so a greedy step still says how sure the model was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def check_cuts(top_k: int | None, top_p: float | None) -> None:
    """top_k a whole number of at least 1 (or None), top_p a number in (0, 1] (or None); ValueError names it."""
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a whole number of at least 1 (or None: no cut), got {top_k!r}")
    if top_p is not None:
        number = not isinstance(top_p, bool) and isinstance(top_p, int | float) and math.isfinite(top_p)
        if not number or not 0 < top_p <= 1:
            raise ValueError(f"top_p must be a number above 0 and at most 1 (or None: no cut), got {top_p!r}")


def kept(probs: torch.Tensor, top_k: int | None = None, top_p: float | None = None) -> torch.Tensor:
    """(V,) bool: the tokens top-k and then top-p keep of a distribution (V,); True where kept."""
    check_cuts(top_k, top_p)
    keep = probs > 0
    if top_k is not None and top_k < int(keep.sum()):
        keep = likeliest(probs, top_k)
    if top_p is None or top_p >= 1:
        return keep
    idx = torch.nonzero(keep).flatten()  # ascending ids: a stable sort keeps the lower id first on a tie
    head = probs[idx]
    order = torch.sort(head, descending=True, stable=True).indices
    mass = torch.cumsum(head[order] / head.sum(), 0)  # the renormalised distribution top-k left, from the top
    reached = torch.nonzero(mass >= top_p)
    n = int(reached[0]) + 1 if len(reached) else len(order)
    out = torch.zeros_like(keep)
    out[idx[order[:n]]] = True
    return out


def likeliest(probs: torch.Tensor, k: int) -> torch.Tensor:
    """(V,) bool: the k likeliest tokens, the lower id on a tie, for k below the count of positive ones; no sort."""
    floor = torch.topk(probs, k).values[-1]  # the k-th likeliest probability (> 0: more than k tokens are above 0)
    out = probs > floor
    tied = torch.nonzero(probs == floor).flatten()[: k - int(out.sum())]
    out[tied] = True
    return out


def sampler(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    banned: Sequence[int] = (),
) -> tuple[torch.Tensor, torch.Tensor]:
    """The distribution a token is drawn from (V,) float64, renormalised over what the cuts keep, and that mask."""
    z = logits.double().clone()
    if len(banned):
        z[list(banned)] = float("-inf")
    probs = torch.softmax(z / temperature if temperature > 0 else z, -1)
    keep = kept(probs, top_k, top_p)
    cut = torch.where(keep, probs, torch.zeros_like(probs))
    return cut / cut.sum(), keep
