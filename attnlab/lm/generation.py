"""Generation with a key/value cache, whole or StreamingLLM's window with sinks: one cached step per new token.

The prompt but its last token fills the cache in one pass (each of its rows masked to what the cache holds at its
turn); every step then feeds one token, first the prompt's last, so each step computes one query row per head.
`temperature=0` is greedy (argmax, deterministic); above 0 a token is drawn from softmax(logits / temperature), cut
by top-k and top-p and renormalised (`attnlab.lm.sampling`), with a generator seeded by `seed`, so the same seed gives
the same text. <bos> and <unk> are never drawn: their probability is set to 0 before the cuts, and `probs` is the
distribution the token was drawn from; `argmax` is the greedy choice beside the drawn `token_id`.
`extend(lm, done, n, temperature)` goes on from a Generation (its cache copied, its sampler's state restored): one
step costs one step, whatever came before, and the tokens are those `generate` would have given for the whole length.
`branches(lm, text, n, temperatures, seed)` continues one prompt at several temperatures in one batch: the prompt
fills the cache once, then each step is one forward pass for every row; row r is what `generate` gives at
temperatures[r] with the same seed (each row has its own sampler, seeded alike).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.limits import MAX_LM_GENERATE
from attnlab.lm.cache import Cache, check_window
from attnlab.lm.sampling import check_cuts, sampler
from attnlab.lm.vocab import Prepared

MAX_BRANCHES = 8  # rows one `branches` call continues side by side


@dataclass(frozen=True)
class Step:
    """One added token: what it is, the distribution it came from, and the cache that produced it."""

    token: str
    token_id: int
    argmax: int  # the greedy choice: the likeliest id (what temperature 0 would have picked here)
    probs: np.ndarray  # (V,) float64: the distribution the token was drawn from (after temperature, top-k, top-p)
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


def check_args(n: int, temperature: float, seed: int, top_k: int | None = None, top_p: float | None = None) -> None:
    """n a whole number 0..MAX_LM_GENERATE, temperature finite and >= 0, seed a whole number, top_k >= 1 and top_p in
    (0, 1] (or None); ValueError names the argument."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_LM_GENERATE:
        raise ValueError(f"n must be a whole number from 0 to {MAX_LM_GENERATE}, got {n!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number of 0 or more, got {temperature!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be a finite number of 0 or more, got {temperature!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be a whole number, got {seed!r}")
    check_cuts(top_k, top_p)


@dataclass(frozen=True)
class Sampling:
    """How each token is chosen: temperature (0: greedy), the top-k and top-p cuts (None: no cut)."""

    temperature: float = 0.0
    top_k: int | None = None
    top_p: float | None = None


def draw(logits: torch.Tensor, banned: list[int], how: Sampling, gen: torch.Generator) -> tuple[int, torch.Tensor, int]:
    """The next id, the distribution it came from (float64, banned ids at 0) and the greedy choice."""
    probs, _ = sampler(logits, how.temperature, how.top_k, how.top_p, banned)
    greedy = int(probs.argmax())  # the likeliest token is never cut, and a temperature keeps the order
    if how.temperature == 0:
        return greedy, probs, greedy
    return int(torch.multinomial(probs, 1, generator=gen)), probs, greedy


@torch.no_grad()
def generate(
    lm,
    text: str,
    n: int,
    temperature: float = 0.0,
    seed: int = 0,
    window: int | None = None,
    sinks: int = 0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Generation:
    """Extend `text` by n tokens with a cache; the prompt is cut (its end kept) to leave room for them.

    `lm` is a LanguageModel (its `prepare`, `forward`, `vocab`, `token` and `decode` are used).
    """
    check_args(n, temperature, seed, top_k, top_p)
    check_window(window, sinks)
    prompt = lm.prepare(text, room=n, keep="end")
    cache = prefilled(lm, prompt, Cache(window, sinks))
    gen = torch.Generator().manual_seed(seed)
    newest = torch.tensor(prompt.ids[-1:])
    steps = cached_steps(lm, cache, newest, n, [Sampling(temperature, top_k, top_p)], [gen])[0]
    return Generation(lm.decode([s.token_id for s in steps]), steps, prompt, cache, gen.get_state())


def prefilled(lm, prompt: Prepared, cache: Cache) -> Cache:
    """The cache after the prompt but its last token (which the first step feeds)."""
    if len(prompt.ids) > 1:
        lm.forward(torch.tensor([prompt.ids[:-1]]), cache=cache)
    return cache


def cached_steps(
    lm, cache: Cache, newest: torch.Tensor, n: int, hows: list[Sampling], gens: list[torch.Generator]
) -> list[list[Step]]:
    """n tokens for each of the B rows the cache holds, each step one pass from the newest tokens (B,) fed so far;
    row b drawn as hows[b] says with gens[b] (the cache and the samplers advance)."""
    banned, rows = lm.vocab.banned(), [[] for _ in hows]
    for _ in range(n):
        out = lm.forward(newest[:, None], cache=cache)
        picks = []
        for b, (how, gen) in enumerate(zip(hows, gens, strict=True)):
            pick, probs, greedy = draw(out.logits[b, -1], banned, how, gen)
            rows[b].append(
                Step(
                    token=lm.token(pick),
                    token_id=pick,
                    argmax=greedy,
                    probs=probs.numpy(),
                    positions=np.asarray(cache.positions),
                    weights=torch.stack([w[b, :, -1] for w in out.attentions]).numpy(),  # (L, H, t)
                )
            )
            picks.append(pick)
        newest = torch.tensor(picks)
    return rows


@torch.no_grad()
def extend(
    lm, done: Generation, n: int, temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None
) -> Generation:
    """`done` carried on by n tokens with the sampling it was made with: `done` is left as it was.

    Equal to `generate` with n more tokens when that one's prompt needs no cut; ValueError past the model's length.
    """
    check_args(n, temperature, 0, top_k, top_p)
    cache = copy.deepcopy(done.cache)
    gen = torch.Generator()
    gen.set_state(done.rng)
    newest = torch.tensor([done.steps[-1].token_id]) if done.steps else torch.tensor(done.prompt.ids[-1:])
    steps = [*done.steps, *cached_steps(lm, cache, newest, n, [Sampling(temperature, top_k, top_p)], [gen])[0]]
    return Generation(lm.decode([s.token_id for s in steps]), steps, done.prompt, cache, gen.get_state())


@torch.no_grad()
def branches(
    lm,
    text: str,
    n: int,
    temperatures: list[float],
    seed: int = 0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> list[Generation]:
    """One prompt continued by n tokens at each temperature, side by side: one Generation per temperature, as
    `generate(text, n, temperature, seed, top_k=top_k, top_p=top_p)` gives it, each step one batched pass."""
    if not 1 <= len(temperatures) <= MAX_BRANCHES:
        raise ValueError(f"branches takes 1 to {MAX_BRANCHES} temperatures, got {len(temperatures)}")
    for temperature in temperatures:
        check_args(n, temperature, seed, top_k, top_p)
    prompt = lm.prepare(text, room=n, keep="end")
    cache = prefilled(lm, prompt, Cache()).repeat(len(temperatures))
    gens = [torch.Generator().manual_seed(seed) for _ in temperatures]
    newest = torch.tensor(prompt.ids[-1:] * len(temperatures))
    hows = [Sampling(temperature, top_k, top_p) for temperature in temperatures]
    rows = cached_steps(lm, cache, newest, n, hows, gens)
    return [
        Generation(lm.decode([s.token_id for s in steps]), steps, prompt, cache.row(b), gen.get_state())
        for b, (steps, gen) in enumerate(zip(rows, gens, strict=True))
    ]
