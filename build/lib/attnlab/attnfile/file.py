"""The attention file: what it holds (AttentionFile), how refusals are named (AttentionFileError), its bytes.

One safetensors file: `attentions` (L, H, T_q, T_k) and, for the query-key map, `queries` (L, H, T_q, d)
and `keys` (L, H, T_k, d); the metadata (strings only, as safetensors requires) holds `format`, `model`,
`kind`, `causal` and the token lists as JSON arrays of strings.

`encode` writes the bytes and checks only its arguments; the package's `to_bytes` and `save` then check
them with the reader (`reader.load`), so this module, which the reader imports, never imports it back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import torch
from safetensors.torch import save as st_save

from attnlab.untrusted import DETAIL_CHARS, clip

FORMAT = "attnlab-attention/1"
KINDS = ("self", "encoder", "decoder", "cross")  # self: encoder-only or decoder-only; the rest: encoder-decoder
TENSORS = ("attentions", "queries", "keys")


class AttentionFileError(ValueError):
    """A file that cannot be used: `reason` picks `attnfile_errors.<reason>`, `fmt` fills it, `detail` is English."""

    def __init__(self, reason: str, detail: str | None = None, **fmt: object) -> None:
        self.reason, self.fmt = reason, fmt
        self.detail = clip(detail, DETAIL_CHARS) if detail is not None else None
        super().__init__(reason if self.detail is None else f"{reason}: {self.detail}")


@dataclass(frozen=True, eq=False)
class AttentionFile:
    """Every head's attention for one text (or target and source), with the tokens on each side."""

    attentions: torch.Tensor  # (L, H, T_q, T_k) float32, each row sums to 1 (or 0: a row that saw nothing)
    tokens: tuple[str, ...]  # T_q query tokens
    tokens_k: tuple[str, ...]  # T_k key tokens (== tokens for self-attention)
    model: str = ""
    queries: torch.Tensor | None = None  # (L, H, T_q, d) float32, per-head projected queries
    keys: torch.Tensor | None = None  # (L, H, T_k, d) float32
    kind: str = "self"  # one of KINDS
    causal: bool = False  # every query sees only itself and earlier keys (decoder-only and decoder self-attention)

    @property
    def n_layers(self) -> int:
        """L."""
        return self.attentions.size(0)

    @property
    def n_heads(self) -> int:
        """H per layer."""
        return self.attentions.size(1)

    @property
    def is_self(self) -> bool:
        """Queries and keys are the same tokens (rollout and the causal mask make sense)."""
        return self.kind != "cross"

    @property
    def has_qk(self) -> bool:
        """Queries and keys are known, so the query-key map can be drawn."""
        return self.queries is not None and self.keys is not None


def is_causal(attentions: torch.Tensor) -> bool:
    """Square attention with nothing above the diagonal: each query saw only itself and earlier keys."""
    t_q, t_k = attentions.shape[-2:]
    return t_q == t_k and t_q > 1 and bool((attentions.triu(1).abs() == 0).all())


def _tensor(name: str, x: torch.Tensor | object) -> torch.Tensor:
    """A value as a contiguous float32 CPU tensor (numpy arrays accepted)."""
    t = torch.as_tensor(x)
    if not t.is_floating_point():
        raise TypeError(f"{name} must hold floats, got {t.dtype}")
    return t.detach().to("cpu", torch.float32).contiguous()


def encode(
    attentions: torch.Tensor,
    tokens: list[str] | tuple[str, ...],
    tokens_k: list[str] | tuple[str, ...] | None = None,
    *,
    model: str = "",
    queries: torch.Tensor | None = None,
    keys: torch.Tensor | None = None,
    kind: str | None = None,
    causal: bool | None = None,
) -> bytes:
    """The file's bytes, not yet checked by the reader (the package's `to_bytes` does that before giving them out)."""
    a = _tensor("attentions", attentions)
    tensors = {"attentions": a}
    if (queries is None) != (keys is None):
        raise ValueError("queries and keys go together: give both or neither")
    if queries is not None:
        tensors.update(queries=_tensor("queries", queries), keys=_tensor("keys", keys))
    kind = kind or ("self" if tokens_k is None or list(tokens_k) == list(tokens) else "cross")
    tokens_k = tokens if tokens_k is None else tokens_k
    meta = {
        "format": FORMAT,
        "model": str(model),
        "kind": kind,
        "causal": json.dumps(is_causal(a) and kind != "cross" if causal is None else bool(causal)),
        "tokens": json.dumps(list(tokens), ensure_ascii=False),
        "tokens_k": json.dumps(list(tokens_k), ensure_ascii=False),
    }
    return st_save(tensors, metadata=meta)
