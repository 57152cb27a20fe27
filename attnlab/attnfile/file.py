"""The attention file: what it holds (AttentionFile), how refusals are named (AttentionFileError), its bytes.

One safetensors file: `attentions` (L, H, T_q, T_k) and, for the query-key map, `queries` (L, H, T_q, d)
and `keys` (L, H_kv, T_k, d), H_kv dividing H: query head h reads key/value head h // (H / H_kv); the metadata
(strings only, as safetensors requires) holds `format`, `model`, `kind`, `causal` and the token lists as JSON
arrays of strings. Optional fields (issue 51), each JSON: `kv_head_of` (the key/value head of every query head,
written whenever queries are), the score rule per layer (`scale`, `softcap`, `window`: `attnlab.attnfile.rule`)
and `qk_declined` (why a capture kept no queries and keys: one of DECLINED). A file without them reads as
before: one key head per query head, scale 1/√d, no cap, no window. The format's name stays
`attnlab-attention/1`: older readers ignore the new metadata, and they refuse grouped keys by their shape.

`encode` writes the bytes and checks only its arguments; the package's `to_bytes` and `save` then check
them with the reader (`reader.load`), so this module, which the reader imports, never imports it back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import torch
from safetensors.torch import save as st_save

from attnlab.attnfile.rule import grouping
from attnlab.untrusted import DETAIL_CHARS, clip

FORMAT = "attnlab-attention/1"
KINDS = ("self", "encoder", "decoder", "cross")  # self: encoder-only or decoder-only; the rest: encoder-decoder
TENSORS = ("attentions", "queries", "keys")
DECLINED = (  # why a capture kept no queries and keys (attnfile.declined_<code> in each language)
    "hooks",  # recorded at the projections (no attention interface), and they do not give back the weights
    "mismatch",  # the recorded q, k and rule do not give back the model's weights within the tolerance
    "extra_scores",  # the model adds a term of its own to the scores (T5's position bias)
    "mask_rule",  # the mask is neither full, causal nor a causal sliding window
    "shapes",  # layers differ in their number of heads or their head size
    "calls",  # the attention calls seen are not one per layer the model returned
)


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
    scale: tuple[float, ...] = ()  # per layer, the factor on q·k; () = 1/√d in every layer
    softcap: tuple[float | None, ...] = ()  # per layer, scores become cap·tanh(s/cap) before the mask; () = none
    window: tuple[int | None, ...] = ()  # per layer, query i sees keys i - W < j <= i (causal); () = none
    qk_declined: str = ""  # one of DECLINED when a capture kept no queries and keys, "" otherwise

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

    @property
    def n_kv_heads(self) -> int:
        """H_kv: the key heads per layer (H when the file has no keys)."""
        return self.keys.size(1) if self.keys is not None else self.n_heads

    def kv_head(self, head: int) -> int:
        """The key/value head query head `head` reads (counted from 0)."""
        return head // (self.n_heads // self.n_kv_heads)

    def rule(self, layer: int) -> tuple[float | None, float | None, int | None]:
        """(scale, softcap, window) of one layer, the defaults filled in (scale None only without queries)."""
        default = self.queries.size(-1) ** -0.5 if self.queries is not None else None
        scale = self.scale[layer] if self.scale else default
        return scale, self.softcap[layer] if self.softcap else None, self.window[layer] if self.window else None


def is_causal(attentions: torch.Tensor) -> bool:
    """Square attention with nothing above the diagonal: each query saw only itself and earlier keys."""
    t_q, t_k = attentions.shape[-2:]
    return t_q == t_k and t_q > 1 and not bool(attentions.triu(1).any())  # NaN counts as a weight: not causal


def per_layer(name: str, value: object, n_layers: int) -> list | None:
    """A rule field as one value per layer: None stays None, one value is repeated, a sequence must have L."""
    value = value.tolist() if hasattr(value, "tolist") else value  # a tensor or an array: numbers or a list
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return None
    values = list(value) if isinstance(value, (list, tuple)) else [value] * n_layers
    if len(values) != n_layers:
        raise ValueError(f"{name} needs one value per layer ({n_layers}), got {len(values)}")
    return values


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
    scale: object = None,
    softcap: object = None,
    window: object = None,
    qk_declined: str = "",
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
    if queries is not None:
        n_heads, n_kv_heads = a.size(1), tensors["keys"].size(1) if tensors["keys"].dim() == 4 else 0
        if n_kv_heads and n_heads % n_kv_heads == 0:  # otherwise unstated: the reader names the shapes
            meta["kv_head_of"] = json.dumps(grouping(n_heads, n_kv_heads))
    for name, value in (("scale", scale), ("softcap", softcap), ("window", window)):
        values = per_layer(name, value, a.size(0))
        if values is not None and any(v is not None for v in values):
            meta[name] = json.dumps([None if v is None else int(v) if name == "window" else float(v) for v in values])
    if qk_declined:
        meta["qk_declined"] = str(qk_declined)
    return st_save(tensors, metadata=meta)
