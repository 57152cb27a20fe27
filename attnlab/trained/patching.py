"""Activation and path patching on the decoders through their hook points, and the corruptions (contract 12).

The metric is the summed log-probability of the right next symbol at every position of the clean sequence
whose symbol repeats an earlier period (position i >= period p, with a next symbol): what copying earns.
A share is (patched - corrupt) / (clean - corrupt) in that metric: 0 nothing came back, 1 all of it; NaN
when the two runs are within PATCH_MIN_GAP nats (there is no gap to restore).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnlab.limits import PATCH_MIN_GAP
from attnlab.trained.decoder import Decoder, SymbolError
from attnlab.trained.model import Hooks, hook_name

INTO = ("q", "k", "v")


def period(symbols: list[str]) -> int | None:
    """The shortest p < len(symbols) with symbols[i] == symbols[i - p] for every i >= p; None if none."""
    for p in range(1, len(symbols)):
        if all(symbols[i] == symbols[i - p] for i in range(p, len(symbols))):
            return p
    return None


def repeat_positions(symbols: list[str]) -> list[int]:
    """Positions (from 0) that repeat an earlier period and have a next symbol: where the metric is read."""
    p = period(symbols)
    return [] if p is None else list(range(p, len(symbols) - 1))


@dataclass(frozen=True)
class Gap:
    """The metric on the clean and on the corrupt run, and the positions it sums over."""

    clean: float
    corrupt: float
    positions: tuple[int, ...]

    @property
    def size(self) -> float:
        """Clean minus corrupt, in nats: what patching can bring back."""
        return self.clean - self.corrupt

    @property
    def defined(self) -> bool:
        """Whether a share of the gap means anything (the runs differ by at least PATCH_MIN_GAP)."""
        return abs(self.size) >= PATCH_MIN_GAP


def _pair(decoder: Decoder, clean, corrupt) -> tuple[list[str], list[str]]:
    """Both sequences as symbol lists; SymbolError for an unknown symbol or different lengths."""
    a = [decoder.vocab[i] for i in decoder.encode(clean).tolist()]
    b = [decoder.vocab[i] for i in decoder.encode(corrupt).tolist()]
    if len(a) != len(b):
        raise SymbolError(f"clean has {len(a)} symbols and corrupt {len(b)}: patching needs the same length")
    return a, b


def _metric(decoder: Decoder, logits: torch.Tensor, clean: list[str]) -> np.ndarray:
    """(N,): summed log-probability of clean's next symbol at its repeat positions; logits (N, T + 1, V)."""
    pos = repeat_positions(clean)
    if not pos:
        return np.zeros(logits.size(0))
    logp = torch.log_softmax(logits.double(), -1)  # (N, T + 1, V); row i + 1 reads symbol i
    targets = decoder.encode([clean[i + 1] for i in pos])
    return logp[:, torch.tensor(pos) + 1, targets].sum(-1).numpy()


@dataclass(frozen=True)
class Runs:
    """The clean and corrupt runs side by side: symbols, ids, the gap and every layer's head outputs."""

    clean: list[str]
    corrupt: list[str]
    ids: torch.Tensor  # (T + 1,) the corrupt run's input ids
    gap: Gap
    out_clean: list[torch.Tensor]  # per layer (1, H, T + 1, d_k)
    out_corrupt: list[torch.Tensor]


@torch.no_grad()
def runs(decoder: Decoder, clean, corrupt) -> Runs:
    """Both runs in one batch; SymbolError for an unknown symbol or different lengths."""
    a, b = _pair(decoder, clean, corrupt)
    ids = torch.stack([decoder.ids(a), decoder.ids(b)])  # (2, T + 1)
    logits, steps = decoder.model(ids)
    m = _metric(decoder, logits, a)
    gap = Gap(float(m[0]), float(m[1]), tuple(repeat_positions(a)))
    return Runs(a, b, ids[1], gap, [s.output[:1] for s in steps], [s.output[1:] for s in steps])


@torch.no_grad()
def restored(decoder: Decoder, r: Runs, hooks: Hooks, n: int = 1) -> np.ndarray:
    """(n,): the share of the gap that comes back in each of n copies of the corrupt run through these hooks."""
    if not r.gap.defined:
        return np.full(n, np.nan)
    logits, _ = decoder.model(r.ids.expand(n, -1), hooks=hooks)
    return (_metric(decoder, logits, r.clean) - r.gap.corrupt) / r.gap.size


def _rows(n: int, row: int, value: torch.Tensor):
    """A hook that puts `value` (1, ...) into batch row `row` of n and leaves the other rows alone."""

    def put(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[row] = value[0]
        return y

    return put


def output_hooks(r: Runs, heads, batched: bool = False) -> dict:
    """Hooks that replace each (layer, head)'s output by its clean output: all in one run, or one per row."""
    heads = list(heads)
    if batched:
        return {
            hook_name(ly, hd, "out"): _rows(len(heads), i, r.out_clean[ly][:, hd]) for i, (ly, hd) in enumerate(heads)
        }
    return {hook_name(ly, hd, "out"): (lambda _x, o=r.out_clean[ly][:, hd]: o) for ly, hd in heads}


def gap(decoder: Decoder, clean, corrupt) -> Gap:
    """The metric on both runs (SymbolError as `patch_heads`)."""
    return runs(decoder, clean, corrupt).gap


def patch_heads(decoder: Decoder, clean, corrupt) -> np.ndarray:
    """(L, H): the share of the gap restored by each head's clean output patched into the corrupt run.

    NaN everywhere when clean and corrupt are within PATCH_MIN_GAP nats. One batched pass, a row per head.
    """
    r = runs(decoder, clean, corrupt)
    heads = [(ly, hd) for ly in range(decoder.n_layers) for hd in range(decoder.n_heads)]
    shares = restored(decoder, r, output_hooks(r, heads, batched=True), len(heads))
    return shares.reshape(decoder.n_layers, decoder.n_heads)


def patch_all(decoder: Decoder, clean, corrupt, heads=None) -> float:
    """The share restored by patching several heads (default: all) at once.

    With every head patched and the runs differing only in their first period, the share is exactly 1 (0 off
    in 40 sequences x both corruptions): at each position the metric reads (i >= p) the corrupt token is the
    clean one, so the stream there is the clean stream term for term. It would fall short of 1 only if the
    metric also read the period's edge (i = p - 1), whose own token the corruption changed.
    """
    r = runs(decoder, clean, corrupt)
    every = [(ly, hd) for ly in range(decoder.n_layers) for hd in range(decoder.n_heads)]
    return float(restored(decoder, r, output_hooks(r, every if heads is None else heads))[0])


@torch.no_grad()
def ablate_heads(decoder: Decoder, clean, corrupt) -> np.ndarray:
    """(L, H): the share of the same gap lost when each head is zeroed in the clean run (ablation, to compare).

    Patching asks whether a head's clean output is enough to bring the answer back into the corrupt run;
    zeroing asks whether the clean run still gets it without that head. NaN when there is no gap.
    """
    r = runs(decoder, clean, corrupt)
    heads = [(ly, hd) for ly in range(decoder.n_layers) for hd in range(decoder.n_heads)]
    if not r.gap.defined:
        return np.full((decoder.n_layers, decoder.n_heads), np.nan)
    zero = torch.zeros(1, r.ids.size(0), decoder.model.cfg.d_model // decoder.n_heads)
    hooks = {hook_name(ly, hd, "out"): _rows(len(heads), i, zero) for i, (ly, hd) in enumerate(heads)}
    ids = decoder.ids(r.clean).expand(len(heads), -1)
    logits, _ = decoder.model(ids, hooks=hooks)
    lost = (r.gap.clean - _metric(decoder, logits, r.clean)) / r.gap.size
    return lost.reshape(decoder.n_layers, decoder.n_heads)


def _check_path(decoder: Decoder, sender, receiver, into: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Sender and receiver as in-range (layer, head) pairs, the sender in an earlier layer; else ValueError."""
    pairs = []
    for name, pair in (("sender", sender), ("receiver", receiver)):
        ly, hd = (int(x) for x in pair)
        if not (0 <= ly < decoder.n_layers and 0 <= hd < decoder.n_heads):
            raise ValueError(f"{name} {pair} is not a head of a {decoder.n_layers} x {decoder.n_heads} model")
        pairs.append((ly, hd))
    if pairs[0][0] >= pairs[1][0]:
        raise ValueError(f"the sender {tuple(sender)} must be in an earlier layer than the receiver {tuple(receiver)}")
    if into not in INTO:
        raise ValueError(f"into must be one of {INTO}, got {into!r}")
    return pairs[0], pairs[1]


def _sender_delta(decoder: Decoder, r: Runs, sender) -> torch.Tensor:
    """(1, T + 1, D): what the sender's clean output writes to the stream minus what its corrupt output writes."""
    ls, hs = sender
    dk = decoder.model.cfg.d_model // decoder.n_heads
    w_o = decoder.model.w_o[ls][hs * dk : (hs + 1) * dk]  # (d_k, D): the sender's rows of W_O
    return (r.out_clean[ls][:, hs] - r.out_corrupt[ls][:, hs]) @ w_o


def path_hooks(decoder: Decoder, r: Runs, paths) -> dict:
    """One row per (sender, receiver, into) path: that row's receiver input reads the corrupt stream plus the
    difference its sender's clean output makes; every other row and input stays corrupt."""
    n, added = len(paths), {}
    for i, (sender, receiver, into) in enumerate(paths):
        name = hook_name(*receiver, into)
        added.setdefault(name, torch.zeros(n, r.ids.size(0), decoder.model.cfg.d_model))
        added[name][i] = _sender_delta(decoder, r, sender)[0]
    return {name: (lambda x, d=delta: x + d) for name, delta in added.items()}


@torch.no_grad()
def patch_path(decoder: Decoder, clean, corrupt, sender, receiver, into: str) -> float:
    """The share restored when the sender's clean output reaches only the receiver's `into` input.

    Everything else stays as in the corrupt run: the sender's direct path and its paths through other heads
    are left corrupt. Layers after the receiver run as usual on what the receiver now writes.
    """
    sender, receiver = _check_path(decoder, sender, receiver, into)
    r = runs(decoder, clean, corrupt)
    return float(restored(decoder, r, path_hooks(decoder, r, [(sender, receiver, into)]))[0])


@torch.no_grad()
def path_map(decoder: Decoder, clean, corrupt, receiver) -> np.ndarray:
    """(S, 3): patch_path from every head of the layers before the receiver's, through q, k and v (one batch)."""
    senders = [(ly, hd) for ly in range(int(receiver[0])) for hd in range(decoder.n_heads)]
    paths = [_check_path(decoder, s, receiver, into) + (into,) for s in senders for into in INTO]
    r = runs(decoder, clean, corrupt)
    return restored(decoder, r, path_hooks(decoder, r, paths), len(paths)).reshape(len(senders), 3)


def redraw_first_period(decoder: Decoder, symbols, seed: int = 0) -> list[str]:
    """The default corruption: the first period's symbols replaced by others the sequence never uses (seeded)."""
    seq = [decoder.vocab[i] for i in decoder.encode(symbols).tolist()]
    p = _period_or_say(seq)
    unused = [s for s in decoder.vocab if s not in set(seq)]
    rng = np.random.default_rng(seed)
    if len(unused) < p:
        unused = [s for s in decoder.vocab if s not in set(seq[:p])]
    new = [unused[i] for i in rng.choice(len(unused), size=p, replace=False)]
    return new + seq[p:]


def shuffle_first_period(decoder: Decoder, symbols, seed: int = 0, tries: int = 200) -> list[str]:
    """The first period's own symbols in another order, keeping as few of its 'x then y' pairs as it can.

    Of `tries` seeded orders it keeps the first with the fewest pairs that also follow each other in the
    clean period (the last symbol is followed by the second period's first); with a period of 3 or more
    that is usually none. A period of 1 cannot be shuffled: SymbolError.
    """
    seq = [decoder.vocab[i] for i in decoder.encode(symbols).tolist()]
    p = _period_or_say(seq)
    if p < 2:
        raise SymbolError("a period of one symbol cannot be shuffled")
    follows = {(seq[i], seq[(i + 1) % p]) for i in range(p)}
    rng = np.random.default_rng(seed)
    best, kept = seq[:p], p + 1
    for _ in range(tries):
        order = [seq[i] for i in rng.permutation(p)]
        pairs = sum((x, y) in follows for x, y in zip(order, [*order[1:], seq[0]], strict=True))
        if order != seq[:p] and pairs < kept:
            best, kept = order, pairs
        if kept == 0:
            break
    return best + seq[p:]


def _period_or_say(seq: list[str]) -> int:
    """The sequence's period, or SymbolError: a corruption of the first period needs one that repeats."""
    p = period(seq)
    if p is None:
        raise SymbolError("the sequence does not repeat a period, so there is no first period to corrupt")
    return p
