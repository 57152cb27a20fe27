"""The benchmark's mask rules (`--mask full|causal|window:W|documents:N`): parsed once, built from attnlab.masks.

A `MaskRule` is what one results row calls its `mask`. It gives every implementation the same rule in the
form it takes: SDPA's `is_causal` flag, a dense boolean (T, T) mask (True = may attend) where SDPA has no flag,
FlexAttention's mask_mod (the block mask is built from it), and the count of (query, key) pairs the rule
allows, which is what the FLOPs count. The dense mask and the mask_mod both come from `attnlab.masks`, so the
app and the benchmark share one definition. `documents:N` packs N documents of equal length T / N
(causal within a document, nothing across), so N must divide every T.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from attnlab import masks
from attnlab.limits import MAX_RESULTS_SIZE

KINDS = ("full", "causal", "window", "documents")
SPEC = re.compile(r"(full|causal)|(window|documents):([0-9]+)")  # what a results row's `mask` may say


@dataclass(frozen=True)
class MaskRule:
    """One rule: `kind` and its size (the window W, or the number of documents N; 0 for full and causal)."""

    kind: str = "full"
    size: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"mask must be one of full, causal, window:W, documents:N, got {self.kind!r}")
        sized = self.kind in ("window", "documents")
        if sized and not 1 <= self.size <= MAX_RESULTS_SIZE:
            what = "window W" if self.kind == "window" else "number of documents N"
            raise ValueError(f"mask {self.kind}: the {what} must be 1 to {MAX_RESULTS_SIZE}, got {self.size}")
        if not sized and self.size:
            raise ValueError(f"mask {self.kind} takes no size, got {self.size}")

    @property
    def spec(self) -> str:
        """How a row and the CLI write the rule: 'full', 'causal', 'window:256', 'documents:4'."""
        return f"{self.kind}:{self.size}" if self.size else self.kind

    @property
    def causal(self) -> bool:
        """True exactly for the causal rule: what a row's `causal` says."""
        return self.kind == "causal"

    @property
    def dense_needed(self) -> bool:
        """Whether SDPA needs a dense boolean mask for this rule (it has flags only for full and causal)."""
        return self.kind in ("window", "documents")

    def check(self, t: int) -> None:
        """Refuse a length this rule cannot cut: N documents of equal length need N to divide T."""
        if self.kind == "documents" and t % self.size:
            raise ValueError(f"mask documents:{self.size} needs every T divisible by {self.size}, got T={t}")

    def document_ids(self, t: int, device: torch.device | str = "cpu") -> torch.Tensor:
        """(T,) document id of each position: N runs of T / N equal ids."""
        self.check(t)
        return torch.arange(t, device=device) // (t // self.size)

    def mask_mod(self, t: int, device: torch.device | str = "cpu") -> masks.MaskMod:
        """FlexAttention's form of the rule, from `attnlab.masks.mask_mod` (document ids on `device`)."""
        if self.kind == "documents":
            return masks.mask_mod("documents", documents=self.document_ids(t, device), length=t)
        return masks.mask_mod(self.kind, window=self.size or None)

    def dense(self, t: int, device: torch.device | str = "cpu") -> torch.Tensor:
        """(T, T) bool, True = may attend, from `attnlab.masks.build`, moved to `device`."""
        docs = self.document_ids(t) if self.kind == "documents" else None
        return masks.build(self.kind, t, window=self.size or None, documents=docs).to(device)

    def pairs(self, t: int) -> int:
        """How many (query, key) pairs the rule allows at length T (no mask is built)."""
        self.check(t)
        if self.kind == "full":
            return t * t
        if self.kind == "causal":
            return t * (t + 1) // 2
        if self.kind == "window":
            w = min(self.size, t)  # query i sees min(i + 1, W) keys
            return w * (w + 1) // 2 + (t - w) * w
        length = t // self.size  # N documents, each causal within itself
        return self.size * length * (length + 1) // 2

    def share(self, t: int) -> float:
        """Allowed pairs over T^2: how much of the full score matrix the rule keeps."""
        return self.pairs(t) / (t * t) if t else 0.0


FULL = MaskRule("full")
CAUSAL = MaskRule("causal")


def parse_mask(text: str) -> MaskRule:
    """'causal', 'window:256', 'documents:4' (or 'full') as a MaskRule; ValueError with one line otherwise."""
    word = str(text).strip().lower()
    match = SPEC.fullmatch(word)
    if match is None:
        shown = word if len(word) <= 40 else word[:40] + "…"
        why = "window needs a size, e.g. window:256" if word == "window" else ""
        why = why or ("documents needs a count, e.g. documents:4" if word == "documents" else "")
        hint = f" ({why})" if why else ""
        raise ValueError(f"mask {shown!r} is not a rule: use full, causal, window:W or documents:N{hint}")
    if match.group(1):
        return MaskRule(match.group(1))
    kind, digits = match.group(2), match.group(3).lstrip("0") or "0"
    if len(digits) > 9:  # never int() of a thousand digits
        raise ValueError(f"mask {kind}: the size must be 1 to {MAX_RESULTS_SIZE}, got a {len(digits)}-digit number")
    return MaskRule(kind, int(digits))


def rule_of(mask: str | MaskRule | None, causal: bool = False) -> MaskRule:
    """The rule a config or row means: its `mask` text when given, else causal or full from the flag."""
    if isinstance(mask, MaskRule):
        return mask
    if mask is None:
        return CAUSAL if causal else FULL
    return parse_mask(mask)
