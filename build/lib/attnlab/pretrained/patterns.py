"""Head finder: score every (layer, head) of one run by simple, documented attention patterns.

For attention weights A (queries x keys, rows sum to 1) of one head, each score is a mean over query rows:
    cls          total weight on the [CLS] key, averaged over all queries
    sep          total weight on the [SEP] key(s), averaged over all queries
    previous     A[i, i-1] averaged over the queries that have a previous token (i = 1..T-1)
    next         A[i, i+1] averaged over the queries that have a next token (i = 0..T-2)
    self         A[i, i] averaged over all queries
    punctuation  total weight on punctuation keys (BERT's definition: ASCII symbols and Unicode P*),
                 averaged over all queries; 0 when the sentence has none (a sum over no keys)
    entropy      row entropy -sum_j A[i, j] ln A[i, j] divided by ln T, averaged over all queries:
                 0 = every query looks at one key, 1 = every query spreads evenly over all T keys;
                 dividing by ln T makes sentences of different lengths comparable
Each score lies in [0, 1]. A perfect previous-token head scores 1 on previous; uniform attention scores 1
on entropy and 1/T on cls, self and the rest.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from attnlab.pretrained.encoder import CLS, SEP

PATTERNS = ("cls", "sep", "previous", "next", "self", "punctuation", "entropy")
ASCII_SYMBOLS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


@dataclass(frozen=True)
class HeadScores:
    """values[p, layer, head] is pattern PATTERNS[p]'s score for that head; layers and heads count from 0."""

    values: torch.Tensor  # (P, L, H)

    def of(self, pattern: str) -> torch.Tensor:
        """(L, H) scores of one pattern, so a page can draw them as a layer x head grid."""
        return self.values[PATTERNS.index(pattern)]

    def ranked(self, pattern: str, descending: bool = True) -> list[tuple[int, int, float]]:
        """(layer, head, score) for every head, best first (lowest first for descending=False, e.g. entropy)."""
        grid = self.of(pattern)
        order = grid.flatten().argsort(descending=descending, stable=True)
        n_heads = grid.size(1)
        return [(i // n_heads, i % n_heads, grid.flatten()[i].item()) for i in order.tolist()]

    def rows(self) -> list[dict[str, int | float]]:
        """One tidy row per head: {"layer", "head", then one column per pattern}, ready for a table."""
        n_layers, n_heads = self.values.shape[1:]
        return [
            {"layer": l, "head": h, **{p: self.values[i, l, h].item() for i, p in enumerate(PATTERNS)}}
            for l in range(n_layers)
            for h in range(n_heads)
        ]


def is_punctuation(token: str) -> bool:
    """True for a token made only of punctuation, as BERT's tokenizer splits it: ASCII symbols or Unicode P*."""
    return bool(token) and all(ch in ASCII_SYMBOLS or unicodedata.category(ch).startswith("P") for ch in token)


def key_mask(tokens: Sequence[str], keep: Callable[[str], bool]) -> torch.Tensor:
    """(T,) True where the key's token passes the test (is [CLS], is punctuation, ...)."""
    return torch.tensor([keep(tok) for tok in tokens], dtype=torch.bool)


def weight_on(attentions: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Mean over queries of the total weight on the keys marked True: (..., T, T), (T,) -> (...)."""
    return (attentions * keys.to(attentions.dtype)).sum(-1).mean(-1)


def diagonal_mean(attentions: torch.Tensor, offset: int) -> torch.Tensor:
    """Mean of A[i, i + offset] over the queries where that key exists: -1 previous, 0 self, +1 next."""
    return attentions.diagonal(offset=offset, dim1=-2, dim2=-1).mean(-1)


def normalised_entropy(attentions: torch.Tensor) -> torch.Tensor:
    """Mean over queries of the row entropy divided by ln T (0 log 0 = 0): (..., T, T) -> (...)."""
    entropy = -torch.xlogy(attentions, attentions).sum(-1)  # (..., T)
    return entropy.mean(-1) / math.log(attentions.size(-1))


def head_scores(attentions: torch.Tensor, tokens: Sequence[str]) -> HeadScores:
    """Every pattern score of every head of a run: attentions (L, H, T, T) with T = len(tokens) >= 2."""
    t = attentions.size(-1)
    if t != len(tokens) or t < 2:
        raise ValueError(f"need T >= 2 attention keys and one token per key, got T={t} for {len(tokens)} tokens")
    scores = {
        "cls": weight_on(attentions, key_mask(tokens, lambda tok: tok == CLS)),
        "sep": weight_on(attentions, key_mask(tokens, lambda tok: tok == SEP)),
        "previous": diagonal_mean(attentions, -1),
        "next": diagonal_mean(attentions, 1),
        "self": diagonal_mean(attentions, 0),
        "punctuation": weight_on(attentions, key_mask(tokens, is_punctuation)),
        "entropy": normalised_entropy(attentions),
    }
    return HeadScores(torch.stack([scores[name] for name in PATTERNS]))  # (P, L, H)
