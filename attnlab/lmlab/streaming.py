"""StreamingLLM's experiment on a language model: each token's loss with the whole cache, a window, a window + sinks.

Xiao et al. (2023) read a long text through a model whose key/value cache keeps only the last W tokens: once the
first tokens leave the cache, the loss climbs; keeping the first few (the attention sinks) beside the window holds
it down. `stream(lm, ids, window, sinks)` feeds the text through the model's own cache (`attnlab.lm.Cache`:
contract 14's rule, every token attending only to what the cache holds at its turn, positions kept) CHUNK tokens
at a time, and returns every token's loss and what the last token attends to. The text may be longer than the
model's training length: that is the experiment, so the pass calls the model's module directly (a
`LanguageModel.forward` refuses more tokens than the model's length). With no window it is the plain causal pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnlab.lm import Cache

CHUNK = 64  # tokens per pass: each pass holds (L, H, CHUNK, cached) weights, never (L, H, T, T)


@dataclass(frozen=True)
class Stream:
    """A text through one cache rule: losses (T - 1,) nats, the last query's weights (L, H, T) over every position
    (0 where evicted) and which positions the cache holds at the end (T,) bool."""

    window: int | None
    sinks: int
    losses: np.ndarray
    last_weights: np.ndarray
    kept: np.ndarray

    def mean(self, start: int = 0) -> float:
        """Mean loss of the tokens from index `start` of `losses` on."""
        return float(np.mean(self.losses[start:]))


@torch.no_grad()
def stream(lm, ids: tuple[int, ...], window: int | None = None, sinks: int = 0) -> Stream:
    """The ids through the model with a cache of `window` recent tokens plus `sinks` first ones (None: every one)."""
    cache = Cache(window, sinks if window is not None else 0)
    every = torch.tensor(ids)
    n = len(ids)
    losses, last = [], None
    for start in range(0, n, CHUNK):
        chunk = every[start : start + CHUNK]
        before = list(cache.positions)
        logits, weights, _ = lm.model(chunk[None], None, cache)
        # the positions of this pass's key rows: one new token sees only what the cache keeps (evicted first)
        key_pos = list(cache.positions) if len(chunk) == 1 else [*before, *range(start, start + len(chunk))]
        logp = torch.log_softmax(logits[0].double(), -1)  # (t, V)
        targets = every[start + 1 : start + 1 + len(chunk)]
        losses.append(-logp[: len(targets)].gather(-1, targets[:, None])[:, 0])
        last = (torch.stack([w[0, :, -1] for w in weights]), key_pos)  # (L, H, t_k), the newest query's row
    rows, key_pos = last
    spread = torch.zeros(*rows.shape[:2], n)
    spread[..., key_pos] = rows.float()
    kept = np.zeros(n, dtype=bool)
    kept[cache.positions] = True
    return Stream(window, sinks, torch.cat(losses).numpy(), spread.numpy(), kept)


def running_mean(values: np.ndarray, width: int) -> np.ndarray:
    """The mean of each value and the width - 1 before it (fewer at the start): the curve the page draws."""
    sums = np.cumsum(np.concatenate([[0.0], values]))
    i = np.arange(1, len(values) + 1)
    lo = np.maximum(0, i - width)
    return (sums[i] - sums[lo]) / (i - lo)
