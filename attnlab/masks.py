"""The masks of long-context models beyond causal: sliding window, sinks, prefix-LM and packed documents.

Every mask is boolean, True = may attend (SDPA's convention), shape (T_q, T_k), aligned top-left as SDPA's
`is_causal` is: query i is position i, key j is position j. `mask_mod` gives the same rule in FlexAttention's
form, `(b, h, q_idx, kv_idx) -> bool`, so the benchmark can build a block mask from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import torch

Kind = Literal["full", "causal", "window", "sinks", "prefix", "documents"]
KINDS: tuple[str, ...] = ("full", "causal", "window", "sinks", "prefix", "documents")
END_OF_DOCUMENT = "<EOS>"
MaskMod = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def _check(kind: str, window: int | None, sinks: int, prefix: int) -> None:
    """Refuse what no rule can mean, naming the argument."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind in ("window", "sinks") and (window is None or int(window) < 1):
        raise ValueError(f"window must be at least 1 for kind={kind!r}, got {window!r}")
    if sinks < 0:
        raise ValueError(f"sinks must be 0 or more, got {sinks!r}")
    if prefix < 0:
        raise ValueError(f"prefix must be 0 or more, got {prefix!r}")


def _document_ids(documents: Sequence[int] | torch.Tensor | None, length: int) -> torch.Tensor:
    """The per-position document ids as a long tensor, checked: `length` of them, never decreasing."""
    if documents is None:
        raise ValueError("documents must be given for kind='documents' (one id per position)")
    ids = torch.as_tensor(documents, dtype=torch.long).flatten()
    if ids.numel() != length:
        raise ValueError(f"documents must hold {length} ids (one per position), got {ids.numel()}")
    if length > 1 and bool((ids[1:] < ids[:-1]).any()):
        raise ValueError("documents must be non-decreasing: a packed sequence holds each document in one run")
    return ids


def mask_mod(
    kind: Kind,
    *,
    window: int | None = None,
    sinks: int = 0,
    prefix: int = 0,
    documents: Sequence[int] | torch.Tensor | None = None,
    length: int | None = None,
) -> MaskMod:
    """The rule as FlexAttention's mask_mod: a function of index tensors, True = may attend.

    For `documents`, `length` is how many positions the ids cover (default: all of them).
    """
    _check(kind, window, sinks, prefix)
    if kind == "full":
        return lambda b, h, q_idx, kv_idx: q_idx >= 0  # q_idx >= 0 is True everywhere, as a tensor
    if kind == "causal":
        return lambda b, h, q_idx, kv_idx: kv_idx <= q_idx
    if kind == "window":
        w = int(window)
        return lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (q_idx - kv_idx < w)
    if kind == "sinks":
        w, s = int(window), int(sinks)
        return lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & ((q_idx - kv_idx < w) | (kv_idx < s))
    if kind == "prefix":
        p = int(prefix)
        return lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) | (kv_idx < p)
    if length is None:
        length = 0 if documents is None else torch.as_tensor(documents).numel()
    ids = _document_ids(documents, length)
    return lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (ids[q_idx] == ids[kv_idx])


def build(
    kind: Kind,
    t_q: int,
    t_k: int | None = None,
    *,
    window: int | None = None,
    sinks: int = 0,
    prefix: int = 0,
    documents: Sequence[int] | torch.Tensor | None = None,
) -> torch.Tensor:
    """The (T_q, T_k) boolean mask of `kind`, True = may attend.

    `documents` holds one id per position, max(T_q, T_k) of them (query i and key j are both position i, j).
    Where a rule leaves a query no key (a window never does), that row is all False: SDPA gives it output 0.
    """
    t_k = t_q if t_k is None else t_k
    if t_q < 0 or t_k < 0:
        raise ValueError(f"t_q and t_k must be 0 or more, got {t_q} and {t_k}")
    _check(kind, window, sinks, prefix)
    length = max(t_q, t_k)
    if kind == "documents":
        _document_ids(documents, length)
    rule = mask_mod(kind, window=window, sinks=sinks, prefix=prefix, documents=documents, length=length)
    q_idx = torch.arange(t_q).unsqueeze(-1)  # (T_q, 1)
    kv_idx = torch.arange(t_k).unsqueeze(0)  # (1, T_k)
    zero = torch.zeros((), dtype=torch.long)
    return rule(zero, zero, q_idx, kv_idx).expand(t_q, t_k).clone()


def allowed_pairs(mask: torch.Tensor) -> int:
    """How many (query, key) pairs a boolean mask lets through."""
    return int(mask.sum())


def documents_from_tokens(tokens: Sequence[str], end: str = END_OF_DOCUMENT) -> list[int]:
    """One document id per token for a packed sequence: a document ends after each `end` token.

    `<BOS> I like you <EOS> <BOS> you like me <EOS>` gives [0]*5 + [1]*5. Tokens after the last `end` form one
    more document. The caller decides what a text with no `end` means (it is one document here).
    """
    ids, doc = [], 0
    for token in tokens:
        ids.append(doc)
        if token == end:
            doc += 1
    return ids
