"""Generation with a key/value cache, whole or StreamingLLM's window with sinks: one cached step per new token.

The prompt but its last token fills the cache in one pass (each of its rows masked to what the cache holds at its
turn); every step then feeds one token, first the prompt's last, so each step computes one query row per head.
`temperature=0` is greedy (argmax, deterministic); above 0 a token is drawn from softmax(logits / temperature) with
a generator seeded by `seed`, so the same seed gives the same text. <bos> and <unk> are never drawn: their
probability is set to 0 before the draw, and `probs` is the distribution the token was drawn from.
`extend(lm, done, n, temperature)` goes on from a Generation (its cache copied, its sampler's state restored): one
step costs one step, whatever came before, and the tokens are those `generate` would have given for the whole length.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.limits import MAX_LM_GENERATE
from attnlab.lm.cache import Cache, check_window
from attnlab.lm.vocab import Prepared


@dataclass(frozen=True)
class Step:
    """One added token: what it is, the distribution it came from, and the cache that produced it."""

    token: str
    token_id: int
    probs: np.ndarray  # (V,) float64: the distribution the token was drawn from
    positions: np.ndarray  # (t,) ints: the sequence positions the cache holds after this step (0 = <bos>)
    weights: np.ndarray  # (L, H, t) float32: the newest query's attention over those rows


@dataclass(frozen=True)
class Generation:
    """The added text, one Step per added token, the prompt as the model took it, the cache at the end and the
    sampler's state after the last draw (what `extend` goes on from)."""

    text: str
    steps: list[Step]
    prompt: Prepared
    cache: Cache
    rng: torch.Tensor | None = None


def check_args(n: int, temperature: float, seed: int) -> None:
    """n a whole number 0..MAX_LM_GENERATE, temperature finite and >= 0, seed a whole number; ValueError names it."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_LM_GENERATE:
        raise ValueError(f"n must be a whole number from 0 to {MAX_LM_GENERATE}, got {n!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number of 0 or more, got {temperature!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be a finite number of 0 or more, got {temperature!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be a whole number, got {seed!r}")


def draw(logits: torch.Tensor, banned: list[int], temperature: float, gen: torch.Generator) -> tuple[int, torch.Tensor]:
    """The next id and the distribution it came from (float64), banned ids at probability 0."""
    z = logits.double().clone()
    z[banned] = float("-inf")
    if temperature == 0:
        probs = torch.softmax(z, -1)
        return int(probs.argmax()), probs
    probs = torch.softmax(z / temperature, -1)
    return int(torch.multinomial(probs, 1, generator=gen)), probs


@torch.no_grad()
def generate(
    lm,
    text: str,
    n: int,
    temperature: float = 0.0,
    seed: int = 0,
    window: int | None = None,
    sinks: int = 0,
) -> Generation:
    """Extend `text` by n tokens with a cache; the prompt is cut (its end kept) to leave room for them.

    `lm` is a LanguageModel (its `prepare`, `forward`, `vocab`, `token` and `decode` are used).
    """
    check_args(n, temperature, seed)
    check_window(window, sinks)
    prompt = lm.prepare(text, room=n, keep="end")
    cache = Cache(window, sinks)
    ids = torch.tensor(prompt.ids)
    if len(ids) > 1:
        lm.forward(ids[None, :-1], cache=cache)
    gen = torch.Generator().manual_seed(seed)
    steps = cached_steps(lm, cache, ids[-1:], n, temperature, gen)
    return Generation(lm.decode([s.token_id for s in steps]), steps, prompt, cache, gen.get_state())


def cached_steps(
    lm, cache: Cache, newest: torch.Tensor, n: int, temperature: float, gen: torch.Generator
) -> list[Step]:
    """n tokens, each one cached step from the newest token fed so far (the cache and the sampler advance)."""
    banned, steps = lm.vocab.banned(), []
    for _ in range(n):
        out = lm.forward(newest[None], cache=cache)
        pick, probs = draw(out.logits[0, -1], banned, temperature, gen)
        steps.append(
            Step(
                token=lm.token(pick),
                token_id=pick,
                probs=probs.numpy(),
                positions=np.asarray(cache.positions),
                weights=torch.stack([w[0, :, -1] for w in out.attentions]).numpy(),  # (L, H, t)
            )
        )
        newest = torch.tensor([pick])
    return steps


@torch.no_grad()
def extend(lm, done: Generation, n: int, temperature: float = 0.0) -> Generation:
    """`done` carried on by n tokens at `temperature` (the one it was made with): `done` is left as it was.

    Equal to `generate` with n more tokens when that one's prompt needs no cut; ValueError past the model's length.
    """
    check_args(n, temperature, 0)
    cache = copy.deepcopy(done.cache)
    gen = torch.Generator()
    gen.set_state(done.rng)
    newest = torch.tensor([done.steps[-1].token_id]) if done.steps else torch.tensor(done.prompt.ids[-1:])
    steps = [*done.steps, *cached_steps(lm, cache, newest, n, temperature, gen)]
    return Generation(lm.decode([s.token_id for s in steps]), steps, done.prompt, cache, gen.get_state())
