"""The course's answers on the model pages: the trained decoder, the language model and the key/value cache.

The decoder's come from the page's own readout (`attnlab.trained.readout`), the language model's from the page's
reading (`attnlab.lmlab.reading.recent`: its top ten, and the head finder, `attnlab.lmlab.finder`, on it), the cache's
from `attnlab.kvcache`'s arithmetic on the shape the page uses. Models are loaded once per process and never changed.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from attnlab.course.task import Answer, Unanswerable
from attnlab.limits import TOL_ANSWER_SCORE_TIE

LAYER = 1  # the layer the head tasks ask about: layer 2 on screen (both the decoder and the language models have 2)
MODELS_KEPT = 8  # checkpoints the course keeps loaded (a few MB each)


def ties(scores: np.ndarray) -> tuple[int, tuple[int, ...]]:
    """The best head (from 1) of a layer's scores and the heads within half a printed step of it."""
    best = int(np.argmax(scores))
    near = tuple(h + 1 for h in range(len(scores)) if h != best and scores[h] >= scores[best] - TOL_ANSWER_SCORE_TIE)
    return best + 1, near


@functools.lru_cache(maxsize=MODELS_KEPT)
def decoder(model: str, step: int | None):
    """A shipped decoder at a checkpoint (None: the last)."""
    from attnlab import trained
    from attnlab.links.models import DECODER_MODELS

    return trained.load(DECODER_MODELS[model], step)


def decoder_run(v: dict[str, Any]):
    """The page's run: its model at the link's checkpoint (the nearest one), on the typed symbols."""
    from attnlab.links.lm import nearest
    from attnlab.trained.readout import parse_symbols

    steps = list(decoder(v["model"], None).steps)
    model = decoder(v["model"], nearest(steps, int(v["step"])))
    symbols = parse_symbols(v["seq"])
    if model.problem(symbols) is not None:
        raise Unanswerable("symbols")
    return model, symbols, model.run(symbols)


def induction_head(v: dict[str, Any]) -> Answer:
    """The head of layer 2 that puts most weight, at the last symbol, on what followed that symbol before."""
    from attnlab.trained.readout import offset, previous_followers, strongest_induction

    model, symbols, run = decoder_run(v)
    attentions = np.asarray(run.attentions)  # (L, H, T, T)
    if model.n_layers <= LAYER:
        raise Unanswerable("layers", n=LAYER + 1)
    found = strongest_induction(attentions[LAYER : LAYER + 1], run.tokens, symbols)
    if found is None:
        raise Unanswerable("repeat", symbol=symbols[-1])
    keys = [j + offset(run.tokens, symbols) for j in previous_followers(symbols)]
    best, near = ties(attentions[LAYER][:, -1][:, keys].sum(axis=-1))  # (H,): each head's weight on those keys
    fields = {"symbol": found.symbol, "followers": " ".join(found.followers), "weight": f"{found.weight:.2f}"}
    return Answer(float(best), fields | {"head": str(best)}, tuple(float(h) for h in near))


def confidence(v: dict[str, Any]) -> Answer:
    """The probability the model gives its first guess for the symbol after the last one (the table's last row)."""
    from attnlab.trained.readout import predictions

    model, symbols, run = decoder_run(v)
    last = predictions(np.asarray(run.probs), run.tokens, symbols, model.vocab)[-1]
    guess, p = last.top[0]
    return Answer(p, {"symbol": last.symbol, "guess": guess, "p": f"{p:.2f}"})


@functools.lru_cache(maxsize=MODELS_KEPT)
def language_model(name: str, step: int | None):
    """A language model at a checkpoint (None: its last), loaded once per process and never changed."""
    from attnlab import lm

    return lm.load(name, step)


def lm_of(v: dict[str, Any]):
    """The page's model at its checkpoint, and its text (an empty text holds no answer)."""
    if not v["text"].strip():
        raise Unanswerable("text")
    return language_model(v["model"], v["step"] if v["steps"] else None), v["text"]


def prediction(v: dict[str, Any]):
    """The model's two likeliest next characters after the page's text, with their probabilities: the top of the
    page's ten, from the page's own reading where this process has just made it (`reading.recent`)."""
    from attnlab.lmlab.reading import recent, top_of

    model, text = lm_of(v)
    return top_of(model, recent(model, text).last_logits, k=2)


def next_character(v: dict[str, Any]) -> Answer:
    """The character the model finds likeliest after the text (the top of the page's ten)."""
    from attnlab.lmlab.reading import shown

    found = prediction(v)
    best, second = (shown(t) for t in found.tokens[:2])
    fields = {"best": best, "p": f"{found.probs[0]:.2f}", "second": second, "p2": f"{found.probs[1]:.2f}"}
    return Answer(best, fields)


def next_probability(v: dict[str, Any]) -> Answer:
    """The probability of that likeliest character."""
    from attnlab.lmlab.reading import shown

    found = prediction(v)
    return Answer(found.probs[0], {"best": shown(found.tokens[0]), "p": f"{found.probs[0]:.2f}"})


def previous_head(v: dict[str, Any]) -> Answer:
    """The head finder's strongest previous-token head in layer 2 on the page's text (the page's reading)."""
    from attnlab.lmlab.finder import head_scores
    from attnlab.lmlab.reading import recent

    model, text = lm_of(v)
    got = recent(model, text)
    scores = head_scores(got.attentions, got.pieces, got.lead)["previous"]
    if scores is None:
        raise Unanswerable("tokens", n=3, have=got.n_tokens)
    layer = scores[LAYER].numpy()
    best, near = ties(layer)
    fields = {"scores": ", ".join(f"{h + 1}: {s:.2f}" for h, s in enumerate(layer)), "best": str(best)}
    return Answer(float(best), fields, tuple(float(h) for h in near))


def cache_shape(v: dict[str, Any]):
    """The shape the KV-cache page uses: a listed model's, or the typed one (after the page's fall-backs)."""
    from attnlab.kvcache import MODELS, ModelShape

    if v["model"] in MODELS:
        return MODELS[v["model"]]
    sizes = (v["layers"], v["heads"], v["kv_heads"], v["head_dim"], v["latent"], v["rope_dim"])
    return ModelShape("custom", *sizes, window=v["window"] or 0)


def per_token(v: dict[str, Any]) -> Answer:
    """Bytes one token adds to the cache of every layer, in the page's number format."""
    from attnlab.kvcache import BYTES, bytes_per_token

    shape = cache_shape(v)
    n = bytes_per_token(shape, BYTES[v["bytes"]])
    fields = {"layers": str(shape.layers), "kv": str(shape.kv_heads), "d": str(shape.head_dim)}
    return Answer(n, fields | {"b": f"{BYTES[v['bytes']]:g}", "n": f"{n:,g}", "model": shape.name})


def whole_cache(v: dict[str, Any]) -> Answer:
    """The whole cache: bytes per token x batch x the tokens each sequence keeps, at the page's context."""
    from attnlab.kvcache import BYTES, bytes_per_token, cache_bytes

    shape, b = cache_shape(v), BYTES[v["bytes"]]
    total = cache_bytes(shape, int(v["context"]), int(v["batch"]), b)
    fields = {"per_token": f"{bytes_per_token(shape, b):,g}", "context": f"{v['context']:,}", "batch": str(v["batch"])}
    return Answer(total, fields | {"gb": f"{total / 1e9:.3g}", "n": f"{total:,.0f}"})
