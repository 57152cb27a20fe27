"""FlexAttention in the benchmark: the block mask of a rule, and the call compiled where the machine can.

`torch.compile(flex_attention)` builds a fused kernel (Triton on CUDA, C++ on the CPU) that skips the blocks the
block mask marks empty; eager FlexAttention computes every score and then masks, as SDPA with a dense mask does.
`FlexCall` compiles on its first call (the harness's probe, never timed) and, where the machine has no compiler
or the compile fails, runs eager and keeps why in one line. Its `mode` is what the row says: `compiled`,
`eager` (asked for), or `eager: why`. The choice taken where the contract leaves one open: the compile is dynamic
in T (`dynamic=True`), so one compile serves a whole sweep over T, which is what lets the page's live run and the
record preset's budget afford it (on this CPU the dynamic kernel times the same as a static one; a GPU kernel
specialised to one T might be a little faster). Each dtype, head size, key/value grouping and rule compiles anew.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
from collections.abc import Callable

import torch
from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention

from attnlab.bench.errors import is_oom, one_line
from attnlab.bench.maskrule import MaskRule

RECOMPILE_LIMIT = 512  # compiled variants one process may hold (dtype x head size x group x rule)
REASON_CHARS = 300  # a failed compile's reason, in one line


def compiler_missing(device: torch.device) -> str | None:
    """Why torch.compile cannot build FlexAttention's kernel on this device, or None when it can try."""
    if device.type == "cuda":
        if importlib.util.find_spec("triton") is None:
            return "triton is not installed, so torch.compile cannot build FlexAttention's GPU kernel"
        return None
    if device.type != "cpu":
        return f"torch.compile of FlexAttention is not tried on {device.type}"
    cxx = os.environ.get("CXX") or ("clang++" if sys.platform == "darwin" else "g++")  # what inductor calls
    if shutil.which(cxx) is None:
        return f"no C++ compiler ({cxx} is not on PATH), so torch.compile cannot build FlexAttention's CPU kernel"
    return None


def compile_flex() -> Callable[..., torch.Tensor]:
    """torch.compile(flex_attention), dynamic in T (see the module's note)."""
    return torch.compile(flex_attention, dynamic=True)


def block_mask(rule: MaskRule, t: int, device: torch.device) -> BlockMask | None:
    """The rule as FlexAttention's block mask over (T, T), built from `attnlab.masks`; None for the full rule."""
    if rule.kind == "full":
        return None
    return create_block_mask(rule.mask_mod(t, device), None, None, t, t, device=device)


class FlexCall:
    """flex_attention(q, k, v) with a block mask: compiled on the first call where possible, eager otherwise."""

    def __init__(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: BlockMask | None, gqa: bool, compile: bool
    ) -> None:
        self.q, self.k, self.v, self.mask, self.gqa = q, k, v, mask, gqa
        self.fn: Callable[..., torch.Tensor] = flex_attention
        self.compile_s: float | None = None
        missing = compiler_missing(q.device) if compile else None
        self.pending = compile and missing is None
        self.mode = "eager" if not compile else f"eager: {missing}" if missing else "compiled"

    def __call__(self) -> torch.Tensor:
        if self.pending:
            self.pending = False
            out = self._first_compiled()
            if out is not None:
                return out
        return self.fn(self.q, self.k, self.v, block_mask=self.mask, enable_gqa=self.gqa)

    def _first_compiled(self) -> torch.Tensor | None:
        """Compile and run once; on failure keep the reason in one line and stay eager (None: run eager now)."""
        started = time.perf_counter()
        try:
            fn = compile_flex()
            with torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT):
                out = fn(self.q, self.k, self.v, block_mask=self.mask, enable_gqa=self.gqa)
        except Exception as exc:  # a compiler's failure of any kind: said in one line, then eager
            if is_oom(exc):
                raise
            said = one_line(f"{type(exc).__name__}: {exc}", REASON_CHARS)
            self.mode = f"eager: torch.compile failed: {said}"
            return None
        self.fn, self.compile_s = fn, time.perf_counter() - started
        return out
