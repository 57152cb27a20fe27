"""Attention sources the app can open without an upload: a small registry of models, each with its adapter.

Each example is a name, the input it starts from and an adapter that builds an attention source (an `AttentionFile`,
see `attnlab.sources`) live from a model bundled with attnlab: all-MiniLM-L6-v2 on a sentence, the 2-layer
decoder trained here on a sequence of symbols, and the Llama-architecture language models trained here (`attnlab.lm`,
English and Chinese: rotated queries, keys per key/value head). Adding a model is one adapter function and one more
`Example` entry.
Uploads come through `attnlab.attnfile.load`; `kind_of` (from `attnlab.sources`) names what kind a source holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from attnlab import lm, trained
from attnlab.attnfile import AttentionFile, from_decoder, from_encoder, from_language_model
from attnlab.limits import TRAINED_MAX_SYMBOLS
from attnlab.pretrained.encoder import MAX_TOKENS, load_minilm
from attnlab.sources import CAUSAL, KINDS, SHARED_TOKENS, kind_of

__all__ = ["CAUSAL", "EXAMPLES", "KINDS", "SHARED_TOKENS", "Example", "ExampleInputError", "kind_of"]
DECODER_RECIPE = "induction-2l"  # the trained decoder the examples show


@dataclass(frozen=True)
class Example:
    """One bundled example: its name (URL value, locale key attnfile.example_<name>), first input and builder."""

    name: str
    text: str
    build: Callable[[str], AttentionFile]  # raises ExampleInputError (or ValueError) for an input it cannot read
    max_tokens: int  # the model reads at most this many tokens of the input
    cuts: bool = True  # longer input is cut to max_tokens (MiniLM); False: it is refused (the decoder)
    unknown: Callable[[str], list[str]] | None = None  # what of an input the model reads as <unk>, to be said


class ExampleInputError(ValueError):
    """Input an example's model cannot read: `key` names the sentence to show, `fmt` fills it (raw values)."""

    def __init__(self, key: str, **fmt: object) -> None:
        super().__init__(key)
        self.key, self.fmt = key, fmt


def minilm_file(text: str) -> AttentionFile:
    """all-MiniLM-L6-v2 on one sentence through attnlab's own forward pass, with every head's queries and keys."""
    return from_encoder(load_minilm(), text, MAX_TOKENS)


@cache
def induction_decoder() -> trained.Decoder:
    """The shipped 2-layer decoder's last checkpoint, read once per process (it is never changed)."""
    return trained.load(DECODER_RECIPE)


def decoder_file(text: str) -> AttentionFile:
    """The trained 2-layer decoder on symbols separated by spaces: causal attention, every head's q and k."""
    decoder = induction_decoder()
    symbols = text.split()
    problem = decoder.problem(symbols)
    if problem is not None:
        reason, fields = problem
        if reason == "unknown":
            unknown = fields.pop("unknown")
            fields.update(n=len(unknown), symbols=" ".join(unknown), vocab=" ".join(decoder.vocab))
        raise ExampleInputError(f"decoder.{reason}", **fields)
    return from_decoder(decoder, symbols)


@cache
def language_model(name: str) -> lm.LanguageModel:
    """A shipped language model's last checkpoint, read once per process (it is never changed)."""
    return lm.load(name)


def language_file(name: str, text: str) -> AttentionFile:
    """A language model trained here on `text` (its start kept to the model's length): post-RoPE q, grouped k."""
    return from_language_model(language_model(name), text)


def language_unknown(name: str, text: str) -> list[str]:
    """The characters of `text` the model's vocabulary lacks (each read as <unk>)."""
    return language_model(name).unknown(text)


LM_TEXTS = {
    "en": "In the beginning God created the heaven and the earth. And God saw the light, that it was good.",
    "zh": "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
}
LM_MAX_TOKENS = 256  # the shipped runs' context (a test holds it to lm.load(name).max_len)


def lm_example(name: str) -> Example:
    """The example for one shipped language model (`lm_en`, `lm_zh`)."""
    return Example(
        f"lm_{name}",
        LM_TEXTS[name],
        lambda text: language_file(name, text),
        LM_MAX_TOKENS,
        unknown=lambda text: language_unknown(name, text),
    )


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in (
        Example("minilm", "The animal didn't cross the street because it was too tired.", minilm_file, MAX_TOKENS),
        Example("decoder", "k 3 x m q 7 k 3 x m q 7 k 3 x m q 7", decoder_file, TRAINED_MAX_SYMBOLS, False),
        lm_example("en"),
        lm_example("zh"),
    )
}
