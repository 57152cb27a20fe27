"""Queries and keys where a transformers model computes attention: one function in its attention interface.

transformers (>= 4.48) calls `ALL_ATTENTION_FUNCTIONS[config._attn_implementation]` from every attention layer with
the tensors its scores are made of: queries (B, H, T_q, d) after RoPE (partial too), biases and q/k norms; keys
(B, H_kv, T_k, d), one per key/value head, not repeated; the additive mask (B, 1, T_q, T_k) the layer uses (Mistral's
window is only there); `scaling`; and each family's extras (`softcap`, `sliding_window`, T5's `position_bias`).
`recording(model)` registers `attend` under NAME there, and the eager mask function under NAME in the mask registry
(without it the function receives no mask and the model silently runs without its causal mask), switches the model
to NAME for the call and back afterwards. `attend` delegates to the eager attention of the layer's own module, so
each family's quirks stay its own (Gemma 2 caps before the mask), and records what it received and returned, with
the check made on the spot: softmax(cap(q·kᵀ·scale) + mask) against the weights the model returned.
Both registries are found through the model object (the globals of its layers' modules); attnlab never imports
transformers (contract 9). NAME stays registered (the registries have no way to remove one); outside a capture
`attend` is the eager attention and records nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import torch

from attnlab.attnfile.rule import infer as rule_infer
from attnlab.attnfile.rule import weights as rule_weights

NAME = "attnlab_capture"
POSITIONS = ("position_ids", "cache_position")  # tensors the layer is handed that never enter its scores
_CALLS: ContextVar[list | None] = ContextVar("attnlab_capture_calls", default=None)


@dataclass(frozen=True)
class Call:
    """What one attention layer used (batch item 0) and how far q, k and its rule give back its weights."""

    module: int  # id() of the attention module, for its path in the model
    queries: torch.Tensor  # (H, T_q, d) float32
    keys: torch.Tensor  # (H_kv, T_k, d) float32
    scale: float
    softcap: float | None
    allowed: torch.Tensor | None  # (T_q, T_k) bool from the mask the layer received; None: no mask
    mask_rule: bool  # the mask only blocks keys (0 or the lowest number), the same for every head
    declared_window: int | None  # the `sliding_window` the layer was handed
    extras: tuple[str, ...]  # other tensors the layer was handed (a position bias would be one)
    diff: float  # max |softmax(cap(q·kᵀ·scale) + mask) - the weights the model returned|
    half: bool  # the model ran in float16 or bfloat16 (a looser tolerance)
    weights: torch.Tensor  # the weights returned (B, H, T_q, T_k), the model's own tensor: which layer this call was


def _globals(obj: Any) -> dict[str, Any]:
    """The globals of the module that defines obj's class ({} when it cannot be found)."""
    module = sys.modules.get(type(obj).__module__)
    return vars(module) if module is not None else {}


def registries(model: Any) -> tuple[Any, Any] | None:
    """(attention registry, mask registry), reached from the model's own layers' modules, or None."""
    modules = getattr(model, "modules", None)
    if not callable(modules):
        return None
    seen: set[str] = set()
    for layer in modules():
        if type(layer).__module__ in seen:
            continue
        seen.add(type(layer).__module__)
        names = _globals(layer)
        attention = names.get("ALL_ATTENTION_FUNCTIONS")
        if attention is None or "eager_attention_forward" not in names:
            continue
        for value in names.values():
            home = getattr(value, "__module__", None)
            masks = getattr(sys.modules.get(home), "ALL_MASK_ATTENTION_FUNCTIONS", None) if type(home) is str else None
            if masks is not None and "eager" in masks:
                return attention, masks
    return None


def _mask(mask: torch.Tensor | None) -> tuple[torch.Tensor | None, bool]:
    """(T_q, T_k) bool of the keys a (B, 1 or H, T_q, T_k) mask lets through, and whether it only blocks keys."""
    if mask is None:
        return None, True
    m = mask[0]  # (1 or H, T_q, T_k)
    same = m.size(0) == 1 or bool((m == m[:1]).all())
    if m.dtype == torch.bool:
        return m[0], same
    blocked = m <= torch.finfo(m.dtype).min / 2  # eager masks hold the dtype's lowest number (or -inf)
    return ~blocked[0], same and not bool(((m != 0) & ~blocked).any())


def attend(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any, **kw: Any):
    """The layer's own eager attention; during a capture, what it used is recorded and checked."""
    eager = _globals(module).get("eager_attention_forward")
    if eager is None:
        raise RuntimeError(f"{type(module).__name__} has no eager_attention_forward in its module to delegate to")
    out, weights = eager(module, query, key, value, attention_mask, **kw)
    calls = _CALLS.get()
    if calls is not None and weights is not None:
        calls.append(_call(module, query, key, attention_mask, weights, kw))
    return out, weights


def _call(module: Any, query: torch.Tensor, key: torch.Tensor, mask: Any, weights: torch.Tensor, kw: dict) -> Call:
    """One layer's record, with the check made on its own inputs."""
    q, k = query[0].detach().float(), key[0].detach().float()  # (H, T_q, d), (H_kv, T_k, d)
    scale = kw.get("scaling")
    scale = float(scale if scale is not None else getattr(module, "scaling", None) or q.size(-1) ** -0.5)
    softcap = kw.get("softcap")
    softcap = float(softcap) if softcap else None
    m = mask.detach() if isinstance(mask, torch.Tensor) else None
    again = rule_weights(q, k, scale, softcap, None if m is None else m[0].float() if m.is_floating_point() else m[0])
    allowed, only_blocks = _mask(m)
    window = kw.get("sliding_window")
    extras = tuple(n for n, v in kw.items() if isinstance(v, torch.Tensor) and n not in POSITIONS)
    return Call(
        module=id(module),
        queries=q,
        keys=k,
        scale=scale,
        softcap=softcap,
        allowed=allowed,
        mask_rule=only_blocks,
        declared_window=int(window) if isinstance(window, int) and not isinstance(window, bool) else None,
        extras=extras,
        diff=float(again.sub_(weights[0].detach().float()).abs_().max()),
        half=query.dtype in (torch.float16, torch.bfloat16),
        weights=weights,
    )


def _same(weights: torch.Tensor, layer: object) -> bool:
    """The weights a call returned are this layer of the model's output (the same tensor, or equal to it)."""
    return weights is layer or (isinstance(layer, torch.Tensor) and torch.equal(weights, layer))


@contextmanager
def recording(model: Any) -> Iterator[list[Call] | None]:
    """The model switched to `attend` for the block, yielding the list its layers fill; None where it cannot be."""
    found = registries(model)
    config = getattr(model, "config", None)
    before = getattr(config, "_attn_implementation", None)
    switch = getattr(model, "set_attn_implementation", None)
    if found is None or not isinstance(before, str) or not callable(switch):
        yield None
        return
    attention, masks = found
    attention.register(NAME, attend)
    masks.register(NAME, masks["eager"])
    try:
        switch(NAME)
    except (ValueError, KeyError, NotImplementedError):  # a version or model that refuses a registered name
        yield None
        return
    if getattr(config, "_attn_implementation", None) != NAME:  # switching was skipped (with a warning)
        yield None
        return
    calls: list[Call] = []
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)
        switch(before)


def qk_fields(
    calls: list[Call], layers: tuple, a: torch.Tensor, causal: bool, tolerance: tuple[float, float]
) -> dict | str:
    """The file's queries, keys and rule from one kind's calls (one per layer, in order), or why there are none.

    `layers` are the kind's attentions as the model returned them (`outputs.attentions`), `a` the same stacked
    (L, H, T_q, T_k); `tolerance` is (float32, half). Each call must be the layer whose weights it returned, and
    each layer's mask must be exactly the rule the file states (`rule.infer` compares them cell by cell), so the
    check made on the received mask is the check of the stated rule. Returns {"queries", "keys", "scale",
    "softcap", "window"} or one of `attnlab.attnfile.DECLINED`.
    """
    n_layers, n_heads, t_q, t_k = a.shape
    if len(calls) != n_layers or not all(_same(c.weights, layer) for c, layer in zip(calls, layers, strict=False)):
        return "calls"
    first = calls[0]
    d, n_kv_heads = first.queries.size(-1), first.keys.size(0)
    q_shape, k_shape = (n_heads, t_q, d), (n_kv_heads, t_k, d)
    if n_heads % n_kv_heads or any(c.queries.shape != q_shape or c.keys.shape != k_shape for c in calls):
        return "shapes"
    tol = tolerance[1] if any(c.half for c in calls) else tolerance[0]
    if any(c.diff > tol for c in calls):
        return "extra_scores" if any(c.extras for c in calls) else "mismatch"
    if not all(c.mask_rule for c in calls):
        return "extra_scores"  # a mask that adds more than blocking: a bias on the scores
    windows = []
    for c in calls:
        try:
            layer_causal, window = rule_infer(c.allowed, t_q, t_k, c.declared_window)
        except ValueError:
            return "mask_rule"
        if layer_causal != causal:
            return "mask_rule"
        windows.append(window)
    softcaps = [c.softcap for c in calls]
    return {
        "queries": torch.stack([c.queries for c in calls]).contiguous(),  # (L, H, T_q, d)
        "keys": torch.stack([c.keys for c in calls]).contiguous(),  # (L, H_kv, T_k, d)
        "scale": tuple(c.scale for c in calls),
        "softcap": tuple(softcaps) if any(s is not None for s in softcaps) else (),
        "window": tuple(windows) if any(w is not None for w in windows) else (),
    }
