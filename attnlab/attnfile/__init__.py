"""Attention from any model (DESIGN contract 9): capture it, save it as safetensors, load an upload safely.

`save(path, attentions, tokens, tokens_k=None, *, model="", queries=None, keys=None)` writes one file;
`to_bytes` (alias `dumps`) gives its bytes for a download; `load(filename, data)` returns an
`AttentionFile` or raises `AttentionFileError` (its `reason` names a sentence `attnfile_errors.<reason>`
in each language); `capture(model, tokenizer, text, target=None)` runs a transformers model and
returns {kind: AttentionFile}; `from_encoder(encoder, text)` does the same for our MiniLM, and
`from_decoder(decoder, symbols)` for a decoder trained here, both with queries and keys. Only torch,
numpy and safetensors are imported here.
"""

from attnlab.attnfile.capture import capture, from_decoder, from_encoder
from attnlab.attnfile.file import (
    FORMAT,
    KINDS,
    AttentionFile,
    AttentionFileError,
    dumps,
    file_bytes,
    is_causal,
    save,
    to_bytes,
)
from attnlab.attnfile.reader import load

__all__ = [
    "FORMAT",
    "KINDS",
    "AttentionFile",
    "AttentionFileError",
    "capture",
    "dumps",
    "file_bytes",
    "from_decoder",
    "from_encoder",
    "is_causal",
    "load",
    "save",
    "to_bytes",
]
