"""Attention from any model (DESIGN contract 9): capture it, save it as safetensors, load an upload safely.

`save(path, attentions, tokens, tokens_k=None, *, model="", queries=None, keys=None, ...)` writes one file
(keys may have fewer heads than queries: query head h reads key/value head h // (H / H_kv); `scale`, `softcap`
and `window`, one value or one per layer, state the rule the scores follow, `attnlab.attnfile.rule`);
`to_bytes` (alias `dumps`) gives its bytes for a download; `load(filename, data)` returns an
`AttentionFile` or raises `AttentionFileError` (its `reason` names a sentence `attnfile_errors.<reason>`
in each language); `capture(model, tokenizer, text, target=None)` runs a transformers model and
returns {kind: AttentionFile}; `from_encoder(encoder, text)` does the same for our MiniLM, and
`from_decoder(decoder, symbols)` for a decoder trained here, both with queries and keys, and
`from_language_model(lm, text)` for attnlab.lm's Llama (post-RoPE queries, keys per key/value head);
`from_attentions(outputs.attentions, tokens)` takes bertviz's input (batch item 0). Only torch,
numpy and safetensors are imported here.

Modules import one way: `file` (what a file holds, its refusals, its bytes) <- `reader` (a hostile upload,
checked; the shared checks of untrusted bytes are `attnlab.untrusted`'s) <- this package, whose writers
check what `file.encode` wrote with `reader.load` before giving it out.
"""

from __future__ import annotations

from pathlib import Path

import torch

from attnlab.attnfile.capture import capture, from_attentions, from_decoder, from_encoder
from attnlab.attnfile.file import DECLINED, FORMAT, KINDS, AttentionFile, AttentionFileError, encode, is_causal
from attnlab.attnfile.language import from_language_model
from attnlab.attnfile.reader import load

__all__ = [
    "DECLINED",
    "FORMAT",
    "KINDS",
    "AttentionFile",
    "AttentionFileError",
    "capture",
    "dumps",
    "file_bytes",
    "from_attentions",
    "from_decoder",
    "from_encoder",
    "from_language_model",
    "is_causal",
    "load",
    "save",
    "to_bytes",
]


def to_bytes(
    attentions: torch.Tensor,
    tokens: list[str] | tuple[str, ...],
    tokens_k: list[str] | tuple[str, ...] | None = None,
    *,
    model: str = "",
    queries: torch.Tensor | None = None,
    keys: torch.Tensor | None = None,
    kind: str | None = None,
    causal: bool | None = None,
    scale: object = None,
    softcap: object = None,
    window: object = None,
    qk_declined: str = "",
) -> bytes:
    """The file `save` writes, as bytes (for a download); the same checks as `load`, so what is written loads."""
    rule = {"scale": scale, "softcap": softcap, "window": window, "qk_declined": qk_declined}
    data = encode(
        attentions, tokens, tokens_k, model=model, queries=queries, keys=keys, kind=kind, causal=causal, **rule
    )
    load("check.safetensors", data)  # raises AttentionFileError if this would not load back
    return data


dumps = to_bytes


def save(
    path: str | Path,
    attentions: torch.Tensor,
    tokens: list[str] | tuple[str, ...],
    tokens_k: list[str] | tuple[str, ...] | None = None,
    *,
    model: str = "",
    queries: torch.Tensor | None = None,
    keys: torch.Tensor | None = None,
    kind: str | None = None,
    causal: bool | None = None,
    scale: object = None,
    softcap: object = None,
    window: object = None,
    qk_declined: str = "",
) -> Path:
    """Write one safetensors file that `load` (and the app's Attention file page) reads back; returns its path."""
    rule = {"scale": scale, "softcap": softcap, "window": window, "qk_declined": qk_declined}
    data = to_bytes(
        attentions, tokens, tokens_k, model=model, queries=queries, keys=keys, kind=kind, causal=causal, **rule
    )
    path = Path(path)
    path.write_bytes(data)
    return path


def file_bytes(f: AttentionFile) -> bytes:
    """An AttentionFile as the bytes of its file (the page's download)."""
    return to_bytes(
        f.attentions,
        f.tokens,
        f.tokens_k,
        model=f.model,
        queries=f.queries,
        keys=f.keys,
        kind=f.kind,
        causal=f.causal,
        scale=f.scale,
        softcap=f.softcap,
        window=f.window,
        qk_declined=f.qk_declined,
    )
