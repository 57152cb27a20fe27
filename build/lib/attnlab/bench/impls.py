"""The calls a sweep times: our explicit and tiled attention, SDPA (free or forced), nn.MultiheadAttention.

Inputs live in a `Case` built once per (dtype, T), outside every timed region; `make_call` returns the
call and the context it must run in (`sdpa_kernel` for a forced backend, so it cannot fall back).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import sdpa_kernel

from attnlab.attention import attention_steps
from attnlab.bench.config import SDPA_BACKENDS, BenchConfig
from attnlab.bench.reference import reference_attention, reference_mha
from attnlab.tiled import tiled_attention


@dataclass
class Case:
    """Inputs of one (dtype, T) point, built once outside every timed region."""

    device: torch.device
    dtype: torch.dtype
    causal: bool
    q: torch.Tensor  # (B, H, T, d)
    k: torch.Tensor
    v: torch.Tensor
    check: bool
    _ref: torch.Tensor | None = None
    _mha: dict = field(default_factory=dict)

    def reference(self) -> torch.Tensor:
        """Float64 reference for the attention output, computed on first use."""
        if self._ref is None:
            self._ref = reference_attention(self.q, self.k, self.v, self.causal)
        return self._ref

    def mha_parts(self, heads: int, head_dim: int, seed: int) -> dict:
        """The nn.MultiheadAttention module, its (B, T, H*d) input and causal mask, built once."""
        if not self._mha:
            e = heads * head_dim
            torch.manual_seed(seed)
            module = nn.MultiheadAttention(e, heads, batch_first=True, device=self.device, dtype=self.dtype)
            module.eval()
            gen = torch.Generator(device="cpu").manual_seed(seed + 7)
            x = torch.randn(self.q.size(0), self.q.size(-2), e, generator=gen).to(self.device, self.dtype)
            t = x.size(1)
            mask = torch.ones(t, t, dtype=torch.bool, device=self.device).triu(1) if self.causal else None
            self._mha.update(module=module, x=x, mask=mask)
        return self._mha


def make_call(impl: str, case: Case, config: BenchConfig) -> tuple[Callable[[], torch.Tensor], object]:
    """(the call to time, the context it must run in: sdpa_kernel for a forced backend)."""
    q, k, v, causal = case.q, case.k, case.v, case.causal
    if impl == "explicit":
        return (lambda: attention_steps(q, k, v, is_causal=causal).output), contextlib.nullcontext()
    if impl == "tiled":
        b = config.tiled_block
        return (lambda: tiled_attention(q, k, v, is_causal=causal, block_q=b, block_k=b)), contextlib.nullcontext()
    if impl == "mha":
        parts = case.mha_parts(config.heads, config.head_dim, config.seed)
        module, x, mask = parts["module"], parts["x"], parts["mask"]

        def call() -> torch.Tensor:
            return module(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)[0]

        return call, contextlib.nullcontext()

    def sdpa() -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    if impl == "sdpa":
        return sdpa, contextlib.nullcontext()
    return sdpa, sdpa_kernel(SDPA_BACKENDS[impl])


def reference_for(impl: str, case: Case, config: BenchConfig) -> torch.Tensor:
    """The float64 answer an implementation's output is held against."""
    if impl != "mha":
        return case.reference()
    parts = case.mha_parts(config.heads, config.head_dim, config.seed)
    return reference_mha(parts["module"], parts["x"], case.causal)
