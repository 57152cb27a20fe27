"""The float64 answer every implementation is held against, computed in row chunks so it never holds T x T at once."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from attnlab.bench.memory import REFERENCE_CHUNK_BYTES


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v in float64, a chunk of query rows at a time to bound memory."""
    q, k, v = q.double(), k.double(), v.double()
    lead, t_q, t_k = q.shape[:-2], q.size(-2), k.size(-2)
    per_row = max(1, math.prod(lead) * t_k * 8)
    chunk = max(1, min(t_q, REFERENCE_CHUNK_BYTES // per_row))
    scale = 1.0 / math.sqrt(q.size(-1))
    out = []
    for r0 in range(0, t_q, chunk):
        rows = slice(r0, min(r0 + chunk, t_q))
        s = (q[..., rows, :] @ k.transpose(-2, -1)) * scale  # (B, H, chunk, T_k)
        if causal:
            q_idx = torch.arange(rows.start, rows.stop, device=q.device)
            s = s.masked_fill(torch.arange(t_k, device=q.device)[None, :] > q_idx[:, None], -math.inf)
        out.append(torch.softmax(s, dim=-1) @ v)  # (B, H, chunk, d)
        del s
    return torch.cat(out, dim=-2)


def reference_mha(mha: nn.MultiheadAttention, x: torch.Tensor, causal: bool) -> torch.Tensor:
    """nn.MultiheadAttention's output recomputed in float64 with the chunked reference attention."""
    x = x.double()
    w_in, b_in = mha.in_proj_weight.double(), mha.in_proj_bias.double()
    q, k, v = F.linear(x, w_in, b_in).chunk(3, dim=-1)  # (B, T, E) each
    b, t, e = q.shape
    h = mha.num_heads

    def split(z: torch.Tensor) -> torch.Tensor:
        return z.reshape(b, t, h, e // h).transpose(1, 2)  # (B, H, T, d)

    o = reference_attention(split(q), split(k), split(v), causal)  # (B, H, T, d)
    o = o.transpose(1, 2).reshape(b, t, e)
    return F.linear(o, mha.out_proj.weight.double(), mha.out_proj.bias.double())
