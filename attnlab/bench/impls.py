"""The calls a sweep times: explicit and tiled attention, SDPA (free or forced), FlexAttention, nn.MultiheadAttention.

Inputs live in a `Case` built once per (dtype, T), outside every timed region, with the mask rule in every form an
implementation takes: SDPA's `is_causal` flag where it has one, else a dense boolean mask (built once, on first
use), and FlexAttention's block mask. `make_call` returns the call and the context it must run in (`sdpa_kernel`
for a forced backend, so it cannot fall back). Grouped key/value heads go to SDPA and FlexAttention as they are
(`enable_gqa`); attnlab's explicit and tiled paths repeat them to every query head inside the call, as
transformers' `repeat_kv` does on every forward pass.
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
from attnlab.bench.flex import FlexCall, block_mask
from attnlab.bench.maskrule import FULL, MaskRule
from attnlab.bench.reference import reference_attention, reference_mha
from attnlab.tiled import tiled_attention


class NotHere(Exception):
    """An implementation that cannot take this case at all (the harness writes `unsupported: <why>`)."""


@dataclass
class Case:
    """Inputs of one (dtype, T) point, built once outside every timed region."""

    device: torch.device
    dtype: torch.dtype
    causal: bool
    q: torch.Tensor  # (B, H, T, d)
    k: torch.Tensor  # (B, H_kv, T, d)
    v: torch.Tensor
    check: bool
    rule: MaskRule = FULL
    _ref: torch.Tensor | None = None
    _mha: dict = field(default_factory=dict)
    _masks: dict = field(default_factory=dict)

    @property
    def grouped(self) -> bool:
        """Fewer key/value heads than query heads."""
        return self.k.size(1) != self.q.size(1)

    def dense(self) -> torch.Tensor | None:
        """The rule as a (T, T) bool mask where SDPA has no flag for it (None for full and causal), built once."""
        if not self.rule.dense_needed:
            return None
        if "dense" not in self._masks:
            self._masks["dense"] = self.rule.dense(self.q.size(-2), self.device)
        return self._masks["dense"]

    def block_mask(self) -> object:
        """FlexAttention's block mask of the rule (None for full), built once."""
        if "block" not in self._masks:
            self._masks["block"] = block_mask(self.rule, self.q.size(-2), self.device)
        return self._masks["block"]

    def reference(self) -> torch.Tensor:
        """Float64 reference for the attention output under the same rule, computed on first use."""
        if self._ref is None:
            rule = None if self.rule.kind == "full" else self.rule.mask_mod(self.q.size(-2), self.device)
            self._ref = reference_attention(self.q, self.k, self.v, rule=rule)
        return self._ref

    def repeated_kv(self) -> tuple[torch.Tensor, torch.Tensor]:
        """k and v repeated to every query head (a copy when grouped): what the explicit and tiled paths read."""
        group = self.q.size(1) // self.k.size(1)
        if group == 1:
            return self.k, self.v
        return self.k.repeat_interleave(group, dim=1), self.v.repeat_interleave(group, dim=1)  # (B, H, T, d)

    def mha_parts(self, heads: int, head_dim: int, seed: int) -> dict:
        """The nn.MultiheadAttention module, its (B, T, H*d) input and its mask (True = blocked), built once."""
        if not self._mha:
            e = heads * head_dim
            torch.manual_seed(seed)
            module = nn.MultiheadAttention(e, heads, batch_first=True, device=self.device, dtype=self.dtype)
            module.eval()
            gen = torch.Generator(device="cpu").manual_seed(seed + 7)
            x = torch.randn(self.q.size(0), self.q.size(-2), e, generator=gen).to(self.device, self.dtype)
            t = x.size(1)
            mask = torch.ones(t, t, dtype=torch.bool, device=self.device).triu(1) if self.causal else None
            if self.rule.dense_needed:
                mask = ~self.dense()  # nn.MultiheadAttention's bool mask says True = may NOT attend
            self._mha.update(module=module, x=x, mask=mask)
        return self._mha


def _explicit(case: Case) -> Callable[[], torch.Tensor]:
    """attention_steps with the rule as SDPA would take it, k and v repeated inside the call when grouped."""
    q, causal, mask = case.q, case.causal, case.dense()

    def call() -> torch.Tensor:
        k, v = case.repeated_kv()
        return attention_steps(q, k, v, attn_mask=mask, is_causal=causal).output

    return call


def _tiled(case: Case, block: int) -> Callable[[], torch.Tensor]:
    """The tiled path: causal skips the tiles past the diagonal; any other rule is a dense mask cut into tiles."""
    q, causal, mask = case.q, case.causal, case.dense()

    def call() -> torch.Tensor:
        k, v = case.repeated_kv()
        return tiled_attention(q, k, v, attn_mask=mask, is_causal=causal, block_q=block, block_k=block)

    return call


def _mha(case: Case, config: BenchConfig) -> Callable[[], torch.Tensor]:
    """nn.MultiheadAttention's forward (its fused fast path when it takes it); it has no grouped heads."""
    if case.grouped:
        raise NotHere("nn.MultiheadAttention has one key/value head per query head, so no grouped-query attention")
    parts = case.mha_parts(config.heads, config.head_dim, config.seed)
    module, x, mask, causal = parts["module"], parts["x"], parts["mask"], case.causal

    def call() -> torch.Tensor:
        return module(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)[0]

    return call


def make_call(impl: str, case: Case, config: BenchConfig) -> tuple[Callable[[], torch.Tensor], object]:
    """(the call to time, the context it must run in: sdpa_kernel for a forced backend). NotHere when it cannot."""
    q, k, v, causal, gqa = case.q, case.k, case.v, case.causal, case.grouped
    if impl == "explicit":
        return _explicit(case), contextlib.nullcontext()
    if impl == "tiled":
        return _tiled(case, config.tiled_block), contextlib.nullcontext()
    if impl == "mha":
        return _mha(case, config), contextlib.nullcontext()
    if impl == "flex":
        return FlexCall(q, k, v, case.block_mask(), gqa, config.flex_compile), contextlib.nullcontext()
    mask = case.dense()
    extra = {"enable_gqa": True} if gqa else {}

    def sdpa() -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, **extra)

    if impl == "sdpa":
        return sdpa, contextlib.nullcontext()
    return sdpa, sdpa_kernel(SDPA_BACKENDS[impl])


def reference_for(impl: str, case: Case, config: BenchConfig) -> torch.Tensor:
    """The float64 answer an implementation's output is held against."""
    if impl != "mha":
        return case.reference()
    parts = case.mha_parts(config.heads, config.head_dim, config.seed)
    rule = None if case.rule.kind == "full" else case.rule.mask_mod(case.q.size(-2), case.device)
    return reference_mha(parts["module"], parts["x"], rule=rule)
