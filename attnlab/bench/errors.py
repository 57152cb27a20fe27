"""How the harness reads a failure: out of memory or not, and PyTorch's multi-line reasons as one line."""

from __future__ import annotations

import re

import torch


def is_oom(exc: BaseException) -> bool:
    """Out-of-memory from the CUDA caching allocator or the CPU allocator."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return "out of memory" in text or "can't allocate memory" in text


def one_line(text: str, limit: int = 600) -> str:
    """Collapse PyTorch's multi-line reasons to one readable line."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
