"""Attention files the app can open without an upload (a small registry), and what kind of attention a file holds.

Each example is a name, the input it starts from and a function that builds an `AttentionFile` live from a model
bundled with attnlab. Adding a model (the trained decoder of attnlab.trained, say) is one more `Example` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from attnlab.attnfile import AttentionFile
from attnlab.pretrained.encoder import MAX_TOKENS, load_minilm

KINDS = ("self", "causal", "encoder", "decoder", "cross")  # what a file's attention can be
SHARED_TOKENS = ("self", "causal", "encoder", "decoder")  # queries and keys are the same tokens
CAUSAL = ("causal", "decoder")  # each query sees only itself and the tokens before it


@dataclass(frozen=True)
class Example:
    """One bundled example: its name (URL value, locale key attnfile.example_<name>), first input and builder."""

    name: str
    text: str
    build: Callable[[str], AttentionFile]  # raises ValueError (with a message) for an input it cannot read
    max_tokens: int  # the model reads at most this many tokens of the input; the rest is cut


def minilm_file(text: str) -> AttentionFile:
    """all-MiniLM-L6-v2 on one sentence through attnlab's own forward pass, with every head's queries and keys."""
    model = load_minilm()
    run = model.run(text)
    heads = [model.layer_steps(run, layer).attention.heads for layer in range(model.n_layers)]
    queries = torch.stack([h.q for h in heads])  # (L, H, T, d_k)
    keys = torch.stack([h.k for h in heads])  # (L, H, T, d_k)
    return AttentionFile(
        attentions=run.attentions,
        tokens=list(run.tokens),
        tokens_k=list(run.tokens),
        model=model.name,
        queries=queries,
        keys=keys,
    )


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in (
        Example("minilm", "The animal didn't cross the street because it was too tired.", minilm_file, MAX_TOKENS),
    )
}


def is_causal(attentions: torch.Tensor) -> bool:
    """True when every head puts zero weight above the diagonal (T_q = T_k > 1): the mark of a causal mask."""
    t_q, t_k = attentions.shape[-2:]
    if t_q != t_k or t_q < 2:
        return False
    above = torch.triu(torch.ones(t_q, t_k, dtype=torch.bool), diagonal=1)
    return bool((attentions[..., above] == 0).all())


def kind_of(file: Any) -> str:
    """The file's own kind when it says one (a part of `capture`), else read off its tokens and weights."""
    declared = getattr(file, "kind", None)
    if declared in KINDS:
        if declared == "self" and is_causal(file.attentions):
            return "causal"
        return declared
    if list(file.tokens) != list(file.tokens_k):
        return "cross"
    return "causal" if is_causal(file.attentions) else "self"
