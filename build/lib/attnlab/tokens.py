"""Tokens, deterministic embeddings and sinusoidal positions: the X that attention starts from.

Embeddings come from a cryptographic hash of (seed, token), never Python's salted hash(), so
a shared link gives every student the same matrices on every machine.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np
import torch

from attnlab.limits import MAX_TOKENS

__all__ = ["MAX_TOKENS", "embed", "input_matrix", "positional_encoding", "token_seed", "tokenize"]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\u3001-\u303f\uff00-\uffef"
_TOKEN = re.compile(
    rf"<[A-Za-z_][A-Za-z0-9_]{{0,15}}>"  # special tokens such as <BOS>, <EOS>, <pad>
    rf"|[{_CJK}]"  # one CJK character (or CJK punctuation) is one token
    rf"|[^\W{_CJK}]+"  # a run of word characters outside CJK: an English (or Arabic, ...) word
    rf"|[^\w\s]"  # any other visible symbol: punctuation, an emoji code point
)


_ZWJ = "\u200d"
_CJK_CHAR = re.compile(f"[{_CJK}]")


def _extends(ch: str) -> bool:
    """A code point drawn as part of the character before it: a combining mark (Arabic harakat,
    Devanagari vowel signs, a decomposed accent, the emoji variation selector), ZWJ, skin tone."""
    return unicodedata.category(ch) in ("Mn", "Mc", "Me") or ch == _ZWJ or "\U0001f3fb" <= ch <= "\U0001f3ff"


def _wordy(ch: str) -> bool:
    """Part of a word that continues across a combining mark (not CJK: one CJK character, one token)."""
    return ch.isalnum() and not _CJK_CHAR.match(ch)


def _regional(tok: str) -> bool:
    return len(tok) == 1 and "\U0001f1e6" <= tok <= "\U0001f1ff"


def tokenize(text: str) -> list[str]:
    """Split into words, punctuation and single CJK characters; `<BOS>`-style tags stay whole.

    A combining mark, skin tone or ZWJ never becomes a token of its own: it stays on the character
    it is drawn with (so "مَرْحَبًا", "नमस्ते", "❤️", "👍🏽", "👨‍👩‍👧" and the flag "🇨🇳" are one token each).
    """
    tokens: list[str] = []
    end = -1
    for match in _TOKEN.finditer(text):
        tok = match.group()
        if tokens and match.start() == end:
            prev = tokens[-1]
            if (
                _extends(tok[0])
                or prev[-1] == _ZWJ
                or (_regional(prev) and _regional(tok))
                or (_extends(prev[-1]) and _wordy(prev[0]) and _wordy(tok[0]))
            ):
                tokens[-1] = prev + tok
                end = match.end()
                continue
        tokens.append(tok)
        end = match.end()
    return tokens


def token_seed(token: str, seed: int) -> int:
    """A 64-bit seed that depends only on the token text and the user's seed."""
    digest = hashlib.blake2b(f"{int(seed)}\x1f{token}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def embed(tokens: list[str], d_model: int, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    """(T, d_model) unit-variance vectors; equal tokens get equal rows, on any machine and process."""
    rows = [np.random.default_rng(token_seed(tok, seed)).standard_normal(d_model) for tok in tokens]
    return torch.tensor(np.array(rows).reshape(len(tokens), d_model), dtype=dtype)


def positional_encoding(t: int, d_model: int, dtype=torch.float64) -> torch.Tensor:
    """(T, d_model) sinusoids: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same angle)."""
    pos = torch.arange(t, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)
    angle = pos / torch.pow(10000.0, two_i / d_model)  # (T, ceil(d/2))
    pe = torch.zeros(t, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(dtype)


def input_matrix(tokens: list[str], d_model: int, seed: int, positions: bool) -> torch.Tensor:
    """X for the Playground: token embeddings, plus sinusoidal positions when asked."""
    x = embed(tokens, d_model, seed)
    return x + positional_encoding(len(tokens), d_model) if positions else x
