"""Greedy generation with a key/value cache: each step computes only the newest token's row (contract 12)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.trained.decoder import Decoder, SymbolError
from attnlab.trained.model import KVCache


@dataclass(frozen=True)
class CacheStep:
    """One generated symbol and the cache that produced it; t = tokens so far, start marker included."""

    symbol: str  # the symbol picked (the most probable)
    token: str  # the newest token, the one whose query this step computed
    query: np.ndarray  # (L, H, d): the newest token's query row in every head
    keys: np.ndarray  # (L, H, t, d): the cache after this step (its last row is the newest token's)
    values: np.ndarray  # (L, H, t, d)
    weights: np.ndarray  # (L, H, t): the newest query's attention over the cache
    probs: np.ndarray  # (V,): the distribution the symbol was picked from
    positions: np.ndarray  # (t,) ints: which positions of the sequence the cache's rows are (0 = the start marker)


@dataclass(frozen=True)
class StepCost:
    """Multiply-adds of one step at t tokens, with the cache and by re-running the whole prefix."""

    tokens: int
    with_cache: int
    without_cache: int
    cache_floats: int  # what the cache holds: K and V, every layer and head

    @property
    def saving(self) -> float:
        """How many times more work the step takes without the cache."""
        return self.without_cache / self.with_cache


def _feed(decoder: Decoder, ids: torch.Tensor, cache: KVCache, ablate) -> tuple[torch.Tensor, list]:
    """Run new token ids (T,) through the model on top of the cache; logits (1, T, V) and the layers' stages."""
    return decoder.model(ids[None], ablate, cache=cache)


def check_window(window: int | None, sinks: int) -> None:
    """A window keeps at least one token (the newest); sinks are 0 or more. ValueError naming the argument."""
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise ValueError(f"window must be a whole number of at least 1 (or None: keep every token), got {window!r}")
    if isinstance(sinks, bool) or not isinstance(sinks, int) or sinks < 0:
        raise ValueError(f"sinks must be a whole number of 0 or more, got {sinks!r}")


@torch.no_grad()
def generate(decoder: Decoder, symbols, n: int, ablate=(), *, window: int | None = None, sinks: int = 0) -> list:
    """Extend `symbols` greedily by n symbols with a K/V cache; one `CacheStep` per generated symbol.

    The prompt but its last token fills the cache in one causal pass; every step then feeds one token (first
    the prompt's last, then each generated symbol), so the cache gains one row per layer and head per step.
    With a `window` the cache keeps the first `sinks` tokens (the start marker is the first) and the last `window`,
    the newest included, as StreamingLLM does: every token, the prompt's too, attends only to what the cache holds
    at its turn (the prompt's pass masks each row so), tokens keep their positions, and each step's keys, values
    and weights cover only the tokens still cached. The whole result must fit the model: len(symbols) + n <=
    decoder.max_len, else SymbolError (a window does not make the model's positions longer).
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, got {n}")
    check_window(window, sinks)
    ids = decoder.ids(symbols)  # (T0 + 1,): start marker, then the prompt; SymbolError names a bad symbol
    if len(ids) - 1 + n > decoder.max_len:
        raise SymbolError(f"{len(ids) - 1} symbols + {n} generated is more than the cap of {decoder.max_len}")
    cache, out = KVCache(window=window, sinks=sinks), []
    _feed(decoder, ids[:-1], cache, ablate)
    newest = ids[-1:]
    for _ in range(n):
        logits, steps = _feed(decoder, newest, cache, ablate)
        probs = torch.softmax(logits[0, -1], -1)  # (V,)
        best = int(probs.argmax())
        positions = np.arange(cache.length) if window is None else np.asarray(cache.positions)
        out.append(
            CacheStep(
                symbol=decoder.vocab[best],
                token=token_text(decoder, int(newest)),
                query=torch.stack([s.q[0, :, -1] for s in steps]).numpy(),  # (L, H, d)
                keys=torch.stack(cache.keys)[:, 0].numpy(),  # (L, H, t, d)
                values=torch.stack(cache.values)[:, 0].numpy(),
                weights=torch.stack([s.weights[0, :, -1] for s in steps]).numpy(),  # (L, H, t)
                probs=probs.numpy(),
                positions=positions,
            )
        )
        newest = torch.tensor([best])
    return out


def token_text(decoder: Decoder, token_id: int) -> str:
    """A token id as text: a symbol, or the start marker."""
    return decoder.start if token_id == len(decoder.vocab) else decoder.vocab[token_id]


def step_cost(decoder: Decoder, t: int) -> StepCost:
    """Multiply-adds for the step whose newest token is the t-th (start marker included), counted from the shapes.

    With the cache: one row through W_QKV, one query against t keys, one weighted sum of t values, one row
    through W_O per layer, one row through the unembedding. Without it: the same for all t rows, and every
    head's full t x t score and weight matrices (attnlab's explicit attention computes the whole square).
    """
    cfg = decoder.model.cfg
    d, h, v, layers = cfg.d_model, cfg.n_heads, cfg.n_vocab, cfg.n_layers

    def work(rows: int) -> int:
        per_layer = rows * d * 3 * d + 2 * h * rows * t * (d // h) + rows * d * d  # QKV, QK^T and AV, W_O
        return layers * per_layer + rows * d * v

    return StepCost(t, work(1), work(t), 2 * layers * t * d)


@torch.no_grad()
def step_times(decoder: Decoder, symbols, repeats: int = 30) -> tuple[float, float]:
    """Median seconds of one step on `symbols`' last token: with the cache (filled beforehand) and without."""
    ids = decoder.ids(symbols)
    cache = KVCache()
    _feed(decoder, ids[:-1], cache, ())
    cached, full = [], []
    for _ in range(repeats + 1):  # the first round warms up and is dropped
        fresh = KVCache(list(cache.keys), list(cache.values))  # appending replaces the lists' tensors, not them
        start = time.perf_counter()
        _feed(decoder, ids[-1:], fresh, ())
        cached.append(time.perf_counter() - start)
        start = time.perf_counter()
        _feed(decoder, ids, KVCache(), ())
        full.append(time.perf_counter() - start)
    return float(np.median(cached[1:])), float(np.median(full[1:]))
