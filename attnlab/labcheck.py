"""The Playground's check against PyTorch: every head against SDPA and FlexAttention, the output against MHA.

The same numbers go to PyTorch's own attention: SDPA gets our per-head queries, the shared (un-repeated) keys and
values with `enable_gqa`, and the run's mask (bool, or float when ALiBi adds its bias). nn.MultiheadAttention
checks the output after W_O where it can hold the settings (square weights, no RoPE); otherwise SDPA's heads go
through W_O themselves. FlexAttention (eager, its unfused path; no compiler needed) runs when asked (`flex`), with
the rule as a block mask from `attnlab.masks.mask_mod` and ALiBi as a score_mod; where it cannot run, the check
says why instead. It is asked for, not run on every change: eager FlexAttention traces its mask_mod and score_mod
for each new shape (a new token count, head count or rule), which takes a second or more on a shared CPU.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F

from attnlab.limits import RTOL_FLOAT64, TOL_FLOAT64
from attnlab.multihead import merge_heads, project
from attnlab.pipeline import Check, LabResult
from attnlab.positions import alibi_slopes
from attnlab.tolerance import bound


def float_mask(result: LabResult) -> torch.Tensor | None:
    """The run's mask as SDPA takes it: None (full), bool (True = may attend), or ALiBi's bias with -inf blocked."""
    steps, rule = result.steps, result.rule
    allowed = None if rule is None or rule.kind == "full" else rule.mask  # (T, T)
    if steps.alibi is None:
        return allowed
    return steps.alibi if allowed is None else steps.alibi.masked_fill(~allowed, float("-inf"))  # (H, T, T)


def per_head(ours: torch.Tensor, ref: torch.Tensor) -> list[float]:
    """Max |difference| of each head's output."""
    return (ours - ref).abs().amax(dim=(-2, -1)).tolist()


def mha_output(result: LabResult, mask: torch.Tensor | None) -> torch.Tensor:
    """nn.MultiheadAttention's output for the same X, weights and mask (True = may NOT attend, float added)."""
    mha = result.weights.to_torch(result.steps.n_heads)
    x = result.x[None]  # (1, T, D)
    blocked = None if mask is None else (~mask if mask.dtype == torch.bool else mask)
    with torch.no_grad():
        ref, _ = mha(x, x, x, attn_mask=blocked, need_weights=False)
    return ref[0]


def flex_heads(result: LabResult) -> torch.Tensor:
    """FlexAttention's per-head output (H, T, d_k): the rule as a block mask, ALiBi as a score_mod, GQA on."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    steps, rule = result.steps, result.rule
    q, k, v = steps.heads.q[None], steps.k_shared[None], steps.v_shared[None]  # (1, H or H_kv, T, d_k)
    t = q.size(-2)
    block = None
    if rule is not None and rule.kind != "full":
        block = create_block_mask(rule.mask_mod(), None, None, t, t, device="cpu")
    score_mod = None
    if steps.alibi is not None:
        slopes = alibi_slopes(steps.n_heads).to(q.dtype)  # (H,)

        def score_mod(score, b, h, q_idx, kv_idx):
            return score - slopes[h] * (q_idx - kv_idx).abs()

    scale = steps.heads.scale
    with warnings.catch_warnings():  # eager FlexAttention says it is unfused: that is the point here
        warnings.simplefilter("ignore", UserWarning)
        return flex_attention(q, k, v, score_mod=score_mod, block_mask=block, scale=scale, enable_gqa=True)[0]


def check_against_torch(result: LabResult, flex: bool = False) -> Check:
    """Max |difference| per head against SDPA (and FlexAttention with `flex`), and after W_O against MHA.

    Allowed: float64's floor plus its relative part of the largest output compared (`attnlab.tolerance`), since an
    edited weight of 1000 makes outputs of 1e5 whose last bits no other summation order keeps.
    """
    steps = result.steps
    heads, mask = steps.heads, float_mask(result)
    q, k, v = heads.q[None], steps.k_shared[None], steps.v_shared[None]  # (1, H or H_kv, T, d_k)
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=heads.scale, enable_gqa=True)[0]
    if result.weights.grouped or steps.rope is not None:
        after, ref = "sdpa", project(merge_heads(sdpa), result.weights.w_o, result.weights.b_o)
    else:
        after, ref = "mha", mha_output(result, mask)
    flexed, flex_error = None, None
    if flex and result.tokens:
        try:
            flexed = per_head(heads.output, flex_heads(result))
        except Exception as err:  # noqa: BLE001 - an unsupported machine is reported, never raised
            flex_error = f"{type(err).__name__}: {err}"[:200]
    diff = float((ref - steps.output).abs().max())
    allowed = max(bound(sdpa, TOL_FLOAT64, RTOL_FLOAT64), bound(ref, TOL_FLOAT64, RTOL_FLOAT64))
    return Check(per_head(heads.output, sdpa), diff, allowed, after, flexed, flex_error)
