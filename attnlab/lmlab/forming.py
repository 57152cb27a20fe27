"""Where the page's prediction forms: the logit lens as a layers x positions grid, and the parts that push a token.

`lens_grid(lm, tr, ids)` reads a trace (`attnlab.lm.trace`: one pass, the residual stream taken apart) through the
final norm and the unembedding CHUNK logits at a time, so a model with a large vocabulary never holds its whole
(L + 1, T, V) lens: it keeps, per layer and position, the likeliest token, its probability, and the rank
of the token that really comes next. `pushes(lm, tr, position, token)` is contract 19's attribution on that trace,
as rows a chart draws; `strongest` keeps the largest of many (a Hub model has hundreds of heads) and sums the rest,
so the bars still add up to the logit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnlab.lm.lens import Trace, parts_of, read_out

CHUNK = 2**22  # logits read out at once (16 MB of float32): every row of a shipped run's lens in one product, 27
# positions at a time for Qwen2's 151,936 tokens


@dataclass(frozen=True)
class LensGrid:
    """The logit lens, kept small: row 0 after the embedding, row l after layer l (the last row is the output)."""

    top: np.ndarray  # (L + 1, T) int: the likeliest next token at each layer and position
    prob: np.ndarray  # (L + 1, T) float64: its probability there
    rank: np.ndarray  # (L + 1, T - 1) int: the rank of the token that comes next (1 = the likeliest)
    actual: np.ndarray  # (L + 1, T - 1) float64: that token's probability

    def formed(self, position: int) -> int | None:
        """The first row from which the real next token after `position` stays the likeliest to the end (None:
        the model's output does not rank it first)."""
        if position >= self.rank.shape[1]:
            return None
        first = self.rank[:, position] == 1
        if not first[-1]:
            return None
        row = len(first) - 1
        while row > 0 and first[row - 1]:
            row -= 1
        return row


@torch.no_grad()
def lens_grid(lm, tr: Trace, ids: tuple[int, ...]) -> LensGrid:
    """The lens of a trace of `ids`, every layer's rows read together, CHUNK logits at a time (float32, as the model
    computes them)."""
    streams = tr.streams()  # (L + 1, T, D)
    rows, t = streams.size(0), streams.size(1)
    flat = streams.reshape(rows * t, -1)  # row r, position i at r * t + i
    nxt = torch.tensor([*ids[1:], 0]).repeat(rows)  # the token after each position (a stand-in after the last)
    top = np.zeros(rows * t, dtype=np.int64)
    prob, actual = np.zeros(rows * t), np.zeros(rows * t)
    rank = np.zeros(rows * t, dtype=np.int64)
    step = max(1, CHUNK // lm.cfg.vocab_size)
    for start in range(0, rows * t, step):
        stop = min(rows * t, start + step)
        logits = read_out(lm, flat[start:stop])  # (chunk, V)
        total = torch.logsumexp(logits, -1)
        best = logits.max(-1)
        want = logits.gather(-1, nxt[start:stop, None])[:, 0]
        top[start:stop] = best.indices.numpy()
        prob[start:stop] = (best.values - total).exp().numpy()
        rank[start:stop] = (logits > want[:, None]).sum(-1).numpy() + 1
        actual[start:stop] = (want - total).exp().numpy()
    grid = (top, prob, rank, actual)
    top, prob, rank, actual = (a.reshape(rows, t) for a in grid)
    return LensGrid(top, prob, rank[:, :-1], actual[:, :-1])


@dataclass(frozen=True)
class Push:
    """One part's direct contribution to a logit: "embed", a head (layer and head from 0), "mlp" or "bias"."""

    kind: str
    layer: int | None
    head: int | None
    value: float
    count: int = 1  # parts summed into this row (more than 1 for the rest of many)


@torch.no_grad()
def pushes(lm, tr: Trace, position: int, token: int) -> tuple[list[Push], float]:
    """Every part's push on `token`'s logit at `position`, in the model's order, and that logit as the pass gave it."""
    parts = parts_of(lm, tr, position, token)
    rows = []
    for name, value in parts.items():
        if name == "embed":
            rows.append(Push("embed", None, None, value))
            continue
        layer, rest = name.split(".")
        kind = rest if rest in ("mlp", "bias") else "head"
        rows.append(Push(kind, int(layer), int(rest) if kind == "head" else None, value))
    logit = float(read_out(lm, tr.streams()[-1, position])[token])
    return rows, logit


@torch.no_grad()
def likeliest(lm, tr: Trace, position: int) -> int:
    """The model's likeliest next token at `position` (its output, read from the trace)."""
    return int(read_out(lm, tr.streams()[-1, position]).argmax())


def strongest(rows: list[Push], n: int) -> list[Push]:
    """The n rows of largest size, in the model's order, and one row summing all the others (when there are)."""
    if len(rows) <= n + 1:
        return list(rows)
    keep = set(sorted(range(len(rows)), key=lambda i: -abs(rows[i].value))[:n])
    rest = [r for i, r in enumerate(rows) if i not in keep]
    return [r for i, r in enumerate(rows) if i in keep] + [
        Push("rest", None, None, sum(r.value for r in rest), len(rest))
    ]
