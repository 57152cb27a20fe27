"""What a trained language model does, measured: held-out loss against n-gram baselines, copying, head shares.

Every loss is in nats per character on the layout training uses: windows of `context` characters, each after a
<bos>, position 0 predicting the window's first character. The unigram (add-one) and bigram models are fitted on
the same training text in the same layout; the bigram interpolates with the unigram, P(b|a) = (c(a,b) + α P(b)) /
(c(a) + α), with α the best of a grid on the held-out text: the baseline gets every benefit of the doubt.
Copying: a string written twice after <bos>, the mean loss on each copy, for random strings of 32 vocabulary
characters (<bos> and <unk> excepted; COPY_STRINGS of them from a fixed seed) and for 48-character held-out
passages (up to COPY_PASSAGES, recorded in metrics.json so anyone can recompute them).
Heads: the share of attention each head gives position 0 (<bos>, the sink) and the previous token on held-out
windows, and, in regular 5- and 7-character held-out poems, the same place one clause earlier (period 6 or 8).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

COPY_LEN, PASSAGE_LEN = 32, 48
COPY_STRINGS, COPY_PASSAGES, COPY_SEED = 16, 8, 2026
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
SHARE_WINDOWS = 8  # held-out windows the sink and previous-token shares are averaged over


def layout(ids: np.ndarray, context: int, bos: int) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, targets) of one stream cut into windows of `context`: inputs <bos> + window[:-1]; the last window
    may be shorter, so both are lists of arrays."""
    starts = range(0, len(ids), context)
    targets = [ids[s : s + context] for s in starts]
    inputs = [np.concatenate([[bos], t[:-1]]) for t in targets]
    return inputs, targets


@torch.no_grad()
def model_loss(model, ids: np.ndarray, context: int, bos: int, batch: int = 32) -> float:
    """Mean next-character loss of a model (its fused path: the same function, faster) over a stream."""
    inputs, targets = layout(ids, context, bos)
    total, count = 0.0, 0
    groups: dict[int, list[int]] = {}
    for i, t in enumerate(targets):
        groups.setdefault(len(t), []).append(i)
    for idx in groups.values():
        for b in range(0, len(idx), batch):
            pick = idx[b : b + batch]
            x = torch.as_tensor(np.stack([inputs[i] for i in pick]), dtype=torch.long)
            y = torch.as_tensor(np.stack([targets[i] for i in pick]), dtype=torch.long)
            logits = model(x, fused=True)[0]
            total += float(F.cross_entropy(logits.flatten(0, 1).double(), y.flatten(), reduction="sum"))
            count += y.numel()
    return total / count


def pairs(ids: np.ndarray, context: int, bos: int) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) id pairs in the training layout (<bos> before each window)."""
    inputs, targets = layout(ids, context, bos)
    return np.concatenate(inputs), np.concatenate(targets)


def ngram_losses(train: np.ndarray, held: np.ndarray, vocab: int, context: int, bos: int) -> dict:
    """Unigram and bigram held-out losses, both fitted on `train` (the bigram's α the best of ALPHAS)."""
    prev, nxt = pairs(train, context, bos)
    uni = (np.bincount(nxt, minlength=vocab) + 1.0) / (len(nxt) + vocab)
    codes, counts = np.unique(prev.astype(np.int64) * vocab + nxt, return_counts=True)
    ctx = np.bincount(prev, minlength=vocab).astype(np.float64)
    h_prev, h_next = pairs(held, context, bos)
    h_codes = h_prev.astype(np.int64) * vocab + h_next
    at = np.clip(np.searchsorted(codes, h_codes), 0, len(codes) - 1)
    c_ab = np.where(codes[at] == h_codes, counts[at], 0).astype(np.float64)
    best = min((float(-np.mean(np.log((c_ab + a * uni[h_next]) / (ctx[h_prev] + a)))), a) for a in ALPHAS)
    return {"unigram_loss": float(-np.mean(np.log(uni[h_next]))), "bigram_loss": best[0], "bigram_alpha": best[1]}


@torch.no_grad()
def copy_losses(lm, bodies: list[list[int]]) -> tuple[float, float]:
    """Mean loss on the first and on the second copy of each body (ids, equal lengths) written twice after <bos>."""
    n = len(bodies[0])
    x = torch.tensor([[lm.vocab.bos_id, *b, *b] for b in bodies])  # (B, 1 + 2n)
    logp = torch.log_softmax(lm.forward(x).logits.double(), -1)  # (B, 1 + 2n, V)
    nll = -logp[:, :-1].gather(-1, x[:, 1:, None])[..., 0]  # (B, 2n): row i predicts token i + 1
    return float(nll[:, :n].mean()), float(nll[:, n:].mean())


def random_strings(vocab_size: int, seed: int = COPY_SEED, n: int = COPY_STRINGS) -> list[list[int]]:
    """n strings of COPY_LEN ids drawn uniformly from the characters (ids 2..V-1: not <bos>, not <unk>)."""
    rng = np.random.default_rng(seed)
    return rng.integers(2, vocab_size, size=(n, COPY_LEN)).tolist()


def passages(docs: list[str], known, poems: list[tuple[str, int]] | None = None) -> list[str]:
    """Up to COPY_PASSAGES held-out passages of PASSAGE_LEN characters, every character known to the vocabulary:
    the start of each regular poem's body where there are poems, else the start of each document."""
    found = []
    for text in [b for b, _ in poems or []] + docs:
        piece = text[:PASSAGE_LEN]
        if len(piece) == PASSAGE_LEN and all(known(c) for c in piece) and piece not in found:
            found.append(piece)
    return found[:COPY_PASSAGES]


@torch.no_grad()
def head_shares(lm, held: np.ndarray, context: int, poems: list[tuple[str, int]]) -> dict:
    """Every head's mean weight on <bos>, on the previous token, and on the place one clause earlier in poems."""
    inputs, _ = layout(held, context, lm.vocab.bos_id)
    full = [w for w in inputs if len(w) == context][:SHARE_WINDOWS]
    att = torch.stack(lm.forward(torch.as_tensor(np.stack(full), dtype=torch.long)).attentions)  # (L, B, H, T, T)
    t = torch.arange(context)
    sink = att[..., 1:, 0].mean((1, 3))  # (L, H)
    previous = att[..., t[2:], t[1:-1]].mean((1, 3))
    out = {"sink": sink.tolist(), "previous": previous.tolist()}
    rows = []
    for body, period in poems:
        ids = lm.encode(body)[: lm.max_len]
        w = torch.stack(lm.forward(torch.tensor([ids])).attentions)[:, 0]  # (L, H, T, T)
        q = torch.arange(1 + period, len(ids))  # body offsets >= period (position 0 is <bos>)
        rows.append(w[..., q, q - period].mean(-1))  # (L, H)
    if rows:
        out["line_earlier"] = torch.stack(rows).mean(0).tolist()
        out["poems"] = len(rows)
    return out


def copying(lm, held_docs: list[str], poems: list[tuple[str, int]]) -> dict:
    """The four copy measures, and the passages they used."""
    first, second = copy_losses(lm, random_strings(len(lm.vocab)))
    chosen = passages(held_docs, lambda c: not lm.unknown(c), poems)
    p_first, p_second = copy_losses(lm, [lm.encode(p)[1:] for p in chosen]) if chosen else (None, None)
    return {
        "copy_loss_first": first,
        "copy_loss_second": second,
        "copy_passage_first": p_first,
        "copy_passage_second": p_second,
        "copy_random": {"length": COPY_LEN, "strings": COPY_STRINGS, "seed": COPY_SEED},
        "copy_passages": chosen,
    }


def measure(lm, held_docs: list[str], held: np.ndarray, context: int, poems: list[tuple[str, int]]) -> dict:
    """Copy measures and head shares of a model (the passages recorded with them)."""
    return {**copying(lm, held_docs, poems), "heads": head_shares(lm, held, context, poems)}
