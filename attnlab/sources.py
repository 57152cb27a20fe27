"""An attention source: what the inspector views draw, whatever model or file the attention came from.

A source holds every head's weights `attentions` (L, H, T_q, T_k) float32 over `tokens` (the queries) and
`tokens_k` (the keys), optionally every head's `queries` (L, H, T_q, d) and `keys` (L, H_kv, T_k, d) (H_kv
divides H: query head h reads key/value head h // (H / H_kv), `kv_head`), the `kind` of attention (`self`,
`encoder`, `decoder`, `cross`; `self` with `causal` set is shown as `causal`) and the `model`'s name.
`attnlab.attnfile.AttentionFile` is one, so every adapter returns an AttentionFile:

- `from_encoder_run(encoder, run)`: our MiniLM's `Encoder.run` (no second forward pass), with q and k;
- `attnlab.attnfile.from_encoder(encoder, text)` and `from_decoder(decoder, symbols)`: a model on an input;
- `attnlab.attnfile.load(filename, data)`: an uploaded file.

The bundled examples (`attnlab.attnexamples.EXAMPLES`) are the registry of models an input opens: adding a model
is one adapter (a function from the input to a source) and one `Example` line there. Torch only, no UI here.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch

from attnlab.attnfile import AttentionFile
from attnlab.multihead import project, split_heads

KINDS = ("self", "causal", "encoder", "decoder", "cross")  # what the pages say a source's attention is
SHARED_TOKENS = ("self", "causal", "encoder", "decoder")  # queries and keys are the same tokens
CAUSAL = ("causal", "decoder")  # each query sees only itself and the tokens before it


@runtime_checkable
class AttentionSource(Protocol):
    """Every head's attention over one input, the tokens on each side, and (optionally) every head's q and k."""

    @property
    def attentions(self) -> torch.Tensor: ...  # (L, H, T_q, T_k) float32, rows summing to 1 (or 0)

    @property
    def tokens(self) -> tuple[str, ...]: ...  # T_q query tokens

    @property
    def tokens_k(self) -> tuple[str, ...]: ...  # T_k key tokens (== tokens for self-attention)

    @property
    def model(self) -> str: ...

    @property
    def queries(self) -> torch.Tensor | None: ...  # (L, H, T_q, d) float32

    @property
    def keys(self) -> torch.Tensor | None: ...  # (L, H, T_k, d) float32

    @property
    def kind(self) -> str: ...  # self, encoder, decoder or cross

    @property
    def causal(self) -> bool: ...  # every query sees only itself and earlier keys


def check(source: AttentionSource) -> AttentionSource:
    """The source itself when its fields agree with each other; ValueError naming the first that does not."""
    a = source.attentions
    if a.dtype != torch.float32 or a.dim() != 4:
        raise ValueError(f"attentions must be float32 (L, H, T_q, T_k), not {a.dtype} {tuple(a.shape)}")
    n_layers, n_heads, t_q, t_k = a.shape
    if (len(source.tokens), len(source.tokens_k)) != (t_q, t_k):
        raise ValueError(f"{len(source.tokens)} and {len(source.tokens_k)} tokens for attentions {tuple(a.shape)}")
    if kind_of(source) not in KINDS:
        raise ValueError(f"unknown kind {source.kind!r}")
    for name, t in (("queries", t_q), ("keys", t_k)):
        x = getattr(source, name)
        if x is None:
            continue
        heads = x.size(1) if name == "keys" and x.dim() == 4 and x.size(1) else n_heads  # H_kv may divide H
        if x.dtype != torch.float32 or x.dim() != 4 or tuple(x.shape[:3]) != (n_layers, heads, t) or n_heads % heads:
            raise ValueError(f"{name} {tuple(x.shape)} do not match attentions {tuple(a.shape)}")
    if source.queries is not None and source.keys is not None and source.queries.size(-1) != source.keys.size(-1):
        raise ValueError("queries and keys have different widths")
    return source


def kind_of(source: AttentionSource) -> str:
    """The kind as the pages name it: the source's own (self, encoder, decoder, cross), self split by `causal`."""
    return "causal" if source.kind == "self" and source.causal else source.kind


def shares_tokens(source: AttentionSource) -> bool:
    """Queries and keys are the same tokens (at least two), so head scores and rollout apply."""
    return kind_of(source) in SHARED_TOKENS and source.attentions.shape[-1] >= 2


def has_qk(source: AttentionSource) -> bool:
    """Every head's queries and keys are known, so the query-key map can be drawn."""
    return source.queries is not None and source.keys is not None


def kv_head(source: AttentionSource, head: int) -> int:
    """The key/value head query head `head` reads: head // (H / H_kv), H_kv the keys' heads (contract 13's rule)."""
    n_heads, n_kv_heads = source.attentions.size(1), source.keys.size(1)
    return head // (n_heads // n_kv_heads)


def window_of(source: AttentionSource, layer: int) -> int | None:
    """The causal sliding window a source states for one layer (an attention file's `window`), or None."""
    window = getattr(source, "window", ())
    return window[layer] if window else None


def from_encoder_run(encoder, run) -> AttentionFile:
    """MiniLM's run (pretrained.EncoderRun) as a source, its q and k computed as `Encoder.layer_steps` does.

    Equal to `attnfile.from_encoder(encoder, run.text)`, without running the model a second time:
    each head's queries and keys are hidden[layer] through its columns of W_Q and W_K plus biases, (L, H, T, d_k).
    """
    queries, keys = [], []
    for layer, weights in enumerate(encoder.weights.layers):
        x, w = run.hidden[layer], weights.attention  # (T, D)
        queries.append(split_heads(project(x, w.w_q, w.b_q), encoder.n_heads))  # (H, T, d_k)
        keys.append(split_heads(project(x, w.w_k, w.b_k), encoder.n_heads))
    attentions = run.attentions.float()
    return AttentionFile(attentions, run.tokens, run.tokens, encoder.name, torch.stack(queries), torch.stack(keys))
