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
    order = torch.sort(probs, descending=True, stable=True).indices  # likeliest first, the lower id on a tie
    ranked = probs[order]
    n = int((ranked > 0).sum())
    if top_k is not None:
        n = min(n, top_k)
    if top_p is not None and top_p < 1 and n > 1:
        head = ranked[:n]
        mass = torch.cumsum(head / head.sum(), 0)  # the renormalised distribution top-k left, summed from the top
        reached = torch.nonzero(mass >= top_p)
        if len(reached):
            n = int(reached[0]) + 1
    out = torch.zeros_like(probs, dtype=torch.bool)
    out[order[:n]] = True
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
