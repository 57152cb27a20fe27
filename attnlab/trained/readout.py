"""What one decoder run says, as the Trained decoder page reads it: the predictions, the two losses, the induction head.

Plain numpy over `DecoderRun` (no Streamlit), so the page, its tests, its budget script and the course's tasks
(`attnlab.course`) read the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TOP_K = 3  # next symbols listed at every position


@dataclass(frozen=True)
class Prediction:
    """What the model predicted after one symbol: its best guesses, the real next symbol and the loss on it."""

    position: int  # 1-based, in the user's sequence
    symbol: str
    top: tuple[tuple[str, float], ...]  # (symbol, probability), best first
    actual: str | None  # the symbol that really follows (None after the last one)
    repeat: bool  # the actual next symbol occurred earlier in the sequence
    loss: float | None  # -ln p(actual)

    @property
    def right(self) -> bool | None:
        """Whether the best guess is the symbol that follows."""
        return None if self.actual is None else self.top[0][0] == self.actual


def parse_symbols(text: str) -> list[str]:
    """The typed sequence split on whitespace."""
    return text.split()


def offset(tokens: Sequence[str], symbols: Sequence[str]) -> int:
    """How many marker tokens stand before the first symbol (the recipe's start marker, if any)."""
    return len(tokens) - len(symbols)


def predictions(
    probs: np.ndarray, tokens: Sequence[str], symbols: Sequence[str], vocab: Sequence[str]
) -> list[Prediction]:
    """Every position's top guesses and the loss on the symbol that really follows."""
    shift = offset(tokens, symbols)
    index = {s: i for i, s in enumerate(vocab)}
    out, seen = [], set()
    for j, symbol in enumerate(symbols):
        seen.add(symbol)
        row = probs[j + shift]  # (V,): the distribution of the symbol after symbols[j]
        best = np.argsort(-row, kind="stable")[:TOP_K]
        top = tuple((vocab[i], float(row[i])) for i in best)
        actual = symbols[j + 1] if j + 1 < len(symbols) else None
        loss = None if actual is None else float(-np.log(max(float(row[index[actual]]), 1e-12)))
        out.append(Prediction(j + 1, symbol, top, actual, actual in seen, loss))
    return out


def mean_losses(preds: Sequence[Prediction]) -> tuple[float | None, float | None]:
    """The mean loss on first occurrences and on repeats (None where there are none)."""
    first = [p.loss for p in preds if p.loss is not None and not p.repeat]
    repeat = [p.loss for p in preds if p.loss is not None and p.repeat]
    return (float(np.mean(first)) if first else None), (float(np.mean(repeat)) if repeat else None)


def accuracy_on_repeats(preds: Sequence[Prediction]) -> float | None:
    """Share of repeats whose best guess is right."""
    marks = [p.right for p in preds if p.actual is not None and p.repeat]
    return float(np.mean(marks)) if marks else None


def random_repeating(vocab: Sequence[str], period: int, length: int, seed: int) -> list[str]:
    """A sequence of `period` distinct random symbols repeated to `length` (seeded, the same on every machine)."""
    rng = np.random.default_rng(seed)
    unit = [vocab[i] for i in rng.choice(len(vocab), size=min(period, len(vocab)), replace=False)]
    return [unit[i % len(unit)] for i in range(length)]


@dataclass(frozen=True)
class Induction:
    """One head's weight, at the last symbol, on every token that followed an earlier occurrence of that symbol."""

    layer: int  # 0-based
    head: int
    symbol: str
    weight: float  # summed over those tokens, as the induction score sums (prefix matching)
    followers: tuple[str, ...]  # the symbols that followed it, each once, in order
    places: int  # how many earlier occurrences were followed (the weight is summed over them)


def previous_followers(symbols: Sequence[str]) -> list[int]:
    """The indices of the symbols that followed each earlier occurrence of the last symbol."""
    last = symbols[-1]
    return [j + 1 for j in range(len(symbols) - 1) if symbols[j] == last]


def strongest_induction(attentions: np.ndarray, tokens: Sequence[str], symbols: Sequence[str]) -> Induction | None:
    """The head that puts most weight, at the last position, on what followed the last symbol before."""
    targets = previous_followers(symbols) if symbols else []
    if not targets:
        return None
    keys = [target + offset(tokens, symbols) for target in targets]
    weights = attentions[:, :, -1, keys].sum(axis=-1)  # (L, H)
    layer, head = np.unravel_index(int(np.argmax(weights)), weights.shape)
    followers = tuple(dict.fromkeys(symbols[target] for target in targets))
    return Induction(int(layer), int(head), symbols[-1], float(weights[layer, head]), followers, len(targets))
