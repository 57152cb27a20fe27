"""How far attnlab's step-by-step attention is from PyTorch's, over many random cases.

usage: python scripts/accuracy.py [--cases 500] [--seed 0]
Prints, per dtype, the largest |ours - F.scaled_dot_product_attention| and
|ours - nn.MultiheadAttention| seen over random shapes, masks (bool, float, causal) and scales.
"""

from __future__ import annotations

import argparse
import sys

import torch
import torch.nn.functional as F

from attnlab.attention import attention_steps
from attnlab.multihead import MultiHeadWeights, multi_head_steps


def random_case(gen: torch.Generator, dtype: torch.dtype) -> tuple[float, float, float, float]:
    """One random SDPA case and one random multi-head case.

    Returns max |ours - SDPA|, max |ours - MHA|, and how far ours and SDPA each are from the
    same computation done in float64 (so a float32 difference can be told apart from an error).
    """
    r = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))  # noqa: E731
    b, h, t_q, t_k, d, d_v = r(1, 3), r(1, 4), r(1, 40), r(1, 40), r(1, 64), r(1, 64)
    q = torch.randn(b, h, t_q, d, generator=gen, dtype=dtype)
    k = torch.randn(b, h, t_k, d, generator=gen, dtype=dtype)
    v = torch.randn(b, h, t_k, d_v, generator=gen, dtype=dtype)
    kind = r(0, 3)
    mask = None
    if kind == 1:
        mask = torch.rand(t_q, t_k, generator=gen) > 0.3
    elif kind == 2:
        mask = torch.randn(b, 1, t_q, t_k, generator=gen, dtype=dtype)
    scale = None if r(0, 1) else float(torch.rand(1, generator=gen)) * 2
    causal = kind == 3
    ours = attention_steps(q, k, v, attn_mask=mask, is_causal=causal, scale=scale).output
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
    sdpa_err = float((ours - ref).abs().max())
    mask64 = mask.double() if mask is not None and mask.dtype != torch.bool else mask
    truth = attention_steps(q.double(), k.double(), v.double(), attn_mask=mask64, is_causal=causal, scale=scale).output
    ours_vs_truth = float((ours.double() - truth).abs().max())
    sdpa_vs_truth = float((ref.double() - truth).abs().max())

    heads = r(1, 4)
    d_model = heads * r(1, 16)
    w = MultiHeadWeights.random(d_model, seed=r(0, 10_000), dtype=dtype)
    x_q = torch.randn(b, r(1, 30), d_model, generator=gen, dtype=dtype)
    x_kv = x_q if r(0, 1) else torch.randn(b, r(1, 30), d_model, generator=gen, dtype=dtype)
    causal = x_kv is x_q and r(0, 1) == 1
    ours = multi_head_steps(x_q, x_kv, w, heads, is_causal=causal).output
    blocked = torch.ones(x_q.size(1), x_kv.size(1), dtype=torch.bool).triu(1) if causal else None
    with torch.no_grad():
        ref, _ = w.to_torch(heads)(x_q, x_kv, x_kv, attn_mask=blocked, need_weights=False)
    return sdpa_err, float((ours - ref).abs().max()), ours_vs_truth, sdpa_vs_truth


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {args.cases} random cases per dtype")
    for dtype in (torch.float32, torch.float64):
        gen = torch.Generator().manual_seed(args.seed)
        errs = [random_case(gen, dtype) for _ in range(args.cases)]
        worst = [max(e[i] for e in errs) for i in range(4)]
        print(
            f"{str(dtype):14s} max|ours-SDPA| = {worst[0]:.2e}   max|ours-MHA| = {worst[1]:.2e}   "
            f"max|ours-float64| = {worst[2]:.2e}   max|SDPA-float64| = {worst[3]:.2e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
