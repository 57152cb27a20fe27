"""One text read by a language model: each character's loss, the model's guesses, every head's attention.

`read(lm, text)` runs `LanguageModel.forward` once on the text (its start kept when it is past the model's
length: a page draws the attention of what was typed) and keeps numbers only: the loss of each token given the
ones before it, the model's first guess there, and every layer's weights as one (L, H, T, T) float32 tensor.
The full distributions are not kept (a Hub model's vocabulary makes them large): `top_at` runs the prefix up to
one position again and gives its k likeliest next tokens, with the distribution a sampler would draw from there
(temperature, top-k and top-p as `attnlab.lm.sampling` applies them). Tokens are shown with `shown`:
a space, a line break and a tab become visible marks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.attnfile import AttentionFile
from attnlab.lm.lens import Trace, from_parts
from attnlab.lm.sampling import sampler

RECENT_KEPT = 4  # readings `recent` keeps: the page's text and a few before it, each under ~12 MB
VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


def shown(token: str) -> str:
    """A token as a label: whitespace made visible (a lone space or line break would be an empty label)."""
    return "".join(VISIBLE.get(c, c) for c in token) if token and not token.strip() else token.replace("\n", "↵")


@dataclass(frozen=True)
class Reading:
    """A text through the model: ids and tokens (<bos> first), per-position losses and first guesses, weights."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]  # the model's tokens, as its vocabulary writes them (<unk> for an unknown character)
    pieces: tuple[str, ...]  # the text each token stands for (an unknown character itself), <bos> as such
    losses: np.ndarray  # (T - 1,) float64: -log p(token i + 1 | tokens 0..i), nats
    guesses: tuple[str, ...]  # (T - 1,): the likeliest token at each position (what the model expected next)
    attentions: torch.Tensor  # (L, H, T, T) float32, causal rows
    unknown: tuple[str, ...]  # characters the vocabulary lacks (read as <unk>)
    cut: int  # tokens past the model's length, left out
    model: str
    lead: int = 1  # 1 when the ids start with <bos> (the first token then has a loss), 0 for a model without one
    last_logits: torch.Tensor | None = None  # (V,) float32: the last position's logits (what follows the text)
    trace: Trace | None = None  # the same pass's residual stream taken apart (`keep_trace`): the lens, the attribution

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def source(self) -> AttentionFile:
        """The weights as an attention source (causal self-attention) for the shared inspector."""
        return AttentionFile(self.attentions, self.labels, self.labels, self.model, causal=True)

    @property
    def labels(self) -> tuple[str, ...]:
        """The pieces as chart labels: whitespace made visible."""
        return tuple(shown(p) for p in self.pieces)

    def mean_loss(self, first: int = 0, last: int | None = None) -> float:
        """Mean loss over the predicted tokens first..last-1 (indices into `losses`)."""
        return float(np.mean(self.losses[first:last]))


_recent: OrderedDict[tuple, Reading] = OrderedDict()
_recent_lock = threading.Lock()


def _key(lm, text: str) -> tuple:
    """Which model at which checkpoint read which text: a model loaded twice reads alike."""
    return (lm.name or str(lm.folder), lm.step, text)


def recent(lm, text: str) -> Reading:
    """The reading of `text` this process made last with this model (the page's own, shared read-only), or a new one.

    The course grades the Language model page's tasks on the page's numbers: read through here it takes no second
    forward pass after the page's (its panel runs after the page). The last RECENT_KEPT readings are kept.
    """
    with _recent_lock:
        got = _recent.get(_key(lm, text))
    return got if got is not None else read(lm, text)


def read(lm, text: str, keep_trace: bool = False) -> Reading:
    """The text's start (up to the model's length) through one forward pass; ValueError for an empty text.
    `keep_trace` keeps that pass's residual stream taken apart (what it wrote anyway: no second pass for the lens).
    Each reading is remembered for `recent`."""
    got = _read(lm, text, keep_trace)
    with _recent_lock:
        _recent[_key(lm, text)] = got
        _recent.move_to_end(_key(lm, text))
        while len(_recent) > RECENT_KEPT:
            _recent.popitem(last=False)
    return got


@torch.no_grad()
def _read(lm, text: str, keep_trace: bool) -> Reading:
    """One forward pass of the text's start, read as `Reading`."""
    prep = lm.prepare(text, keep="start")
    parts: dict[str, torch.Tensor] | None = {} if keep_trace else None
    out = lm.forward(torch.tensor([prep.ids]), parts=parts)
    logp = torch.log_softmax(out.logits[0].double(), -1)  # (T, V)
    ids = torch.tensor(prep.ids)
    losses = -logp[:-1].gather(-1, ids[1:, None])[:, 0]  # (T - 1,): row i predicts token i + 1
    guesses = tuple(lm.token(i) for i in logp[:-1].argmax(-1).tolist())
    weights = torch.stack([w[0] for w in out.attentions]).float()  # (L, H, T, T)
    lead = 1 if lm.vocab.bos_id is not None else 0
    chars = len(prep.text) == len(prep.ids) - lead  # one token per character: a character vocabulary
    pieces = tuple(prep.tokens[:lead]) + (tuple(prep.text) if chars else tuple(prep.tokens[lead:]))
    return Reading(
        tuple(prep.ids),
        tuple(prep.tokens),
        pieces,
        losses.numpy(),
        guesses,
        weights,
        tuple(prep.unknown),
        prep.cut,
        lm.name or str(lm.folder),
        lead,
        out.logits[0, -1].float().clone(),
        None if parts is None else from_parts(parts, lm.n_layers),
    )


@dataclass(frozen=True)
class Top:
    """The k likeliest next tokens at one position: the model's own probabilities and the sampler's."""

    tokens: tuple[str, ...]
    probs: tuple[float, ...]  # softmax(logits)
    tempered: tuple[
        float, ...
    ]  # what generation draws from: temperature, top-k, top-p, renormalised (0: cut or banned)
    kept: int = 0  # how many tokens the sampler keeps (the whole vocabulary without a cut)


@torch.no_grad()
def top_at(
    lm,
    ids: tuple[int, ...],
    position: int,
    k: int = 10,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Top:
    """The k likeliest tokens after ids[0..position], likeliest first (the same order at any temperature > 0)."""
    logits = lm.forward(torch.tensor([list(ids[: position + 1])])).logits[0, -1]
    return top_of(lm, logits, k, temperature, top_k, top_p)


def top_of(
    lm,
    logits: torch.Tensor,
    k: int = 10,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Top:
    """The k likeliest tokens of one position's logits (V,): probabilities as `LanguageModel.predict` gives them."""
    logits = logits.double()
    probs = torch.softmax(logits, -1)
    best = torch.topk(probs, max(1, min(int(k), probs.numel())))
    drawn, keep = sampler(logits, temperature, top_k, top_p, lm.vocab.banned())  # as generation draws
    picked = best.indices.tolist()
    tokens = tuple(lm.token(i) for i in picked)
    return Top(tokens, tuple(best.values.tolist()), tuple(drawn[picked].tolist()), int(keep.sum()))


def copies(reading: Reading) -> tuple[float, float] | None:
    """For a text written twice (its two halves equal), the mean loss on the first copy and on the second
    (contract 16's copy measures, on the user's own text)."""
    lead = reading.lead
    body = reading.ids[lead:]
    n = len(body) // 2
    if n < 2 or len(body) % 2 or body[:n] != body[n:]:
        return None
    start = lead - 1 if lead else 0  # losses[i] is the loss of token i + 1
    return reading.mean_loss(start, n + lead - 1), reading.mean_loss(n + lead - 1)
