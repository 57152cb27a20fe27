"""Attention files the app can open without an upload (a small registry), and what kind of attention a file holds.

Each example is a name, the input it starts from and a function that builds an `AttentionFile` live from a model
bundled with attnlab. Adding a model (the trained decoder of attnlab.trained, say) is one more `Example` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnlab.attnfile import AttentionFile, from_encoder
from attnlab.pretrained.encoder import MAX_TOKENS, load_minilm

KINDS = ("self", "causal", "encoder", "decoder", "cross")  # what the page says a file's attention is
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
    return from_encoder(load_minilm(), text, MAX_TOKENS)


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in (
        Example("minilm", "The animal didn't cross the street because it was too tired.", minilm_file, MAX_TOKENS),
    )
}


def kind_of(file: AttentionFile) -> str:
    """The file's kind as the page names it: its own (self, encoder, decoder, cross), self split by its causal flag."""
    return "causal" if file.kind == "self" and file.causal else file.kind
