"""The float64 answer every implementation is held against, computed in row chunks so it never holds T x T at once.

The mask is a rule (a FlexAttention-style mask_mod from `attnlab.bench.maskrule`), evaluated on each chunk's
rows, so the reference of a window or of packed documents is the same rule as the rows it checks. Grouped
key/value heads are read by query head h as head h // group (SDPA's `enable_gqa`), by broadcasting, never copied.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from attnlab.bench.memory import REFERENCE_CHUNK_BYTES

Rule = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]  # masks.MaskMod


def _causal(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
    """The causal rule, aligned top-left as SDPA's is_causal."""
    return kv_idx <= q_idx


def reference_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, *, rule: Rule | None = None
) -> torch.Tensor:
    """softmax(q k^T / sqrt(d) + mask) v in float64, a chunk of query rows at a time to bound memory.

    q is (B, H, T_q, d); k and v are (B, H_kv, T_k, d) with H_kv dividing H. `rule` (True = may attend) wins over
    `causal`; a query row that may see no key gives 0, as SDPA does.
    """
    rule = rule or (_causal if causal else None)
    q, k, v = q.double(), k.double(), v.double()
    b, h, t_q, d = q.shape
    h_kv, t_k = k.size(1), k.size(-2)
    q = q.reshape(b, h_kv, h // h_kv, t_q, d)  # (B, H_kv, group, T_q, d): query head h reads kv head h // group
    k, v = k.unsqueeze(2), v.unsqueeze(2)  # (B, H_kv, 1, T_k, d)
    per_row = max(1, b * h * t_k * 8)
    chunk = max(1, min(t_q, REFERENCE_CHUNK_BYTES // per_row))
    scale = 1.0 / math.sqrt(d)
    kv_idx = torch.arange(t_k, device=q.device)[None, :]  # (1, T_k)
    zero = torch.zeros((), dtype=torch.long, device=q.device)
    out = []
    for r0 in range(0, t_q, chunk):
        rows = slice(r0, min(r0 + chunk, t_q))
        s = (q[..., rows, :] @ k.transpose(-2, -1)) * scale  # (B, H_kv, group, chunk, T_k)
        if rule is not None:
            allowed = rule(zero, zero, torch.arange(rows.start, rows.stop, device=q.device)[:, None], kv_idx)
            s = s.masked_fill(~allowed, -math.inf)
        weights = torch.softmax(s, dim=-1).nan_to_num(0.0)  # a row with no key: NaN -> 0
        out.append(weights @ v)  # (B, H_kv, group, chunk, d)
        del s, weights
    return torch.cat(out, dim=-2).reshape(b, h, t_q, v.size(-1))


def reference_mha(
    mha: nn.MultiheadAttention, x: torch.Tensor, causal: bool = False, *, rule: Rule | None = None
) -> torch.Tensor:
    """nn.MultiheadAttention's output recomputed in float64 with the chunked reference attention."""
    x = x.double()
    w_in, b_in = mha.in_proj_weight.double(), mha.in_proj_bias.double()
    q, k, v = F.linear(x, w_in, b_in).chunk(3, dim=-1)  # (B, T, E) each
    b, t, e = q.shape
    h = mha.num_heads

    def split(z: torch.Tensor) -> torch.Tensor:
        return z.reshape(b, t, h, e // h).transpose(1, 2)  # (B, H, T, d)

    o = reference_attention(split(q), split(k), split(v), causal, rule=rule)  # (B, H, T, d)
    o = o.transpose(1, 2).reshape(b, t, e)
    return F.linear(o, mha.out_proj.weight.double(), mha.out_proj.bias.double())
