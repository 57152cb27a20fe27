"""Blockwise attention with the online softmax: the idea behind FlashAttention, in plain PyTorch.

Queries are cut into blocks of `block_q` rows and keys/values into blocks of `block_k` rows.
Each query block walks over the key blocks keeping, per query row, a running max `m`, a
running sum `l` of exp(score - m) and an unnormalised output `acc`; when a new key block
raises the max, the old `l` and `acc` are rescaled by exp(m_old - m_new). At no point does
a (T_q, T_k) score matrix exist, only (block_q, block_k) tiles, so memory grows with T.

Masks mean what they mean to `F.scaled_dot_product_attention` (bool True = may attend,
float = added, `is_causal` = lower triangle aligned top-left); a query row that can see
no key gets output 0, as in `attnlab.attention`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from attnlab.attention import default_scale

NEG_INF = float("-inf")


@dataclass(frozen=True)
class OnlineState:
    """Running statistics of one query block after some key blocks have been folded in."""

    m: torch.Tensor  # (..., Tq_blk, 1) running row max of the scaled, masked scores (-inf: nothing seen)
    l: torch.Tensor  # (..., Tq_blk, 1) running sum of exp(score - m)
    acc: torch.Tensor  # (..., Tq_blk, d_v) running sum of exp(score - m) @ v, not yet divided by l

    def normalised(self) -> torch.Tensor:
        """acc / l: the block's output if no further key arrived; rows with l == 0 give 0."""
        safe_l = torch.where(self.l > 0, self.l, torch.ones_like(self.l))
        return torch.where(self.l > 0, self.acc / safe_l, torch.zeros_like(self.acc))


@dataclass(frozen=True)
class TiledStep:
    """What one (query block, key block) step saw and left behind, for a page to walk through."""

    q_block: int  # index of the query block
    k_block: int  # index of the key block
    q_rows: tuple[int, int]  # [start, stop) query rows of this block
    k_cols: tuple[int, int]  # [start, stop) key rows of this block
    skipped: bool  # True when the causal mask hides the whole tile, so it was never computed
    scores: torch.Tensor  # (..., Tq_blk, Tk_blk) scaled scores + mask for this tile (-inf = blocked)
    m: torch.Tensor  # (..., Tq_blk, 1) running max after this step
    l: torch.Tensor  # (..., Tq_blk, 1) running sum after this step
    acc: torch.Tensor  # (..., Tq_blk, d_v) unnormalised partial output after this step
    out: torch.Tensor  # (..., Tq_blk, d_v) acc / l: the partial output normalised so far


@dataclass(frozen=True)
class TiledTrace:
    """Every step of the tiled computation plus its final output (equal to the full softmax's)."""

    steps: list[TiledStep]
    output: torch.Tensor  # (..., T_q, d_v)
    block_q: int
    block_k: int
    scale: float


def _check_blocks(block_q: int, block_k: int) -> None:
    """Refuse block sizes that would loop forever or mean nothing."""
    if int(block_q) < 1 or int(block_k) < 1:
        raise ValueError(f"block sizes must be positive, got block_q={block_q}, block_k={block_k}")


def _acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """Half-precision inputs accumulate in float32, as FlashAttention does; others keep their dtype."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _mask_tile(attn_mask: torch.Tensor | None, rows: tuple[int, int], cols: tuple[int, int]) -> torch.Tensor | None:
    """The part of a broadcastable (..., T_q, T_k) mask that covers one tile (size-1 dims kept)."""
    if attn_mask is None:
        return None
    mask = attn_mask
    while mask.dim() < 2:
        mask = mask.unsqueeze(0)
    if mask.size(-2) != 1:
        mask = mask[..., rows[0] : rows[1], :]
    if mask.size(-1) != 1:
        mask = mask[..., cols[0] : cols[1]]
    return mask


def _tile_scores(
    q_blk: torch.Tensor,
    k_blk: torch.Tensor,
    scale: float,
    mask_blk: torch.Tensor | None,
    is_causal: bool,
    rows: tuple[int, int],
    cols: tuple[int, int],
) -> torch.Tensor:
    """Scaled scores of one tile with the causal and user masks applied as -inf / additive bias."""
    s = (q_blk @ k_blk.transpose(-2, -1)) * scale  # (..., Tq_blk, Tk_blk)
    if is_causal:
        q_idx = torch.arange(rows[0], rows[1], device=s.device)
        k_idx = torch.arange(cols[0], cols[1], device=s.device)
        s = s.masked_fill(k_idx[None, :] > q_idx[:, None], NEG_INF)
    if mask_blk is not None:
        if mask_blk.dtype == torch.bool:
            s = s.masked_fill(~mask_blk, NEG_INF)
        else:
            s = s + mask_blk.to(s.dtype)
    return s


def online_update(state: OnlineState, s: torch.Tensor, v_blk: torch.Tensor) -> OnlineState:
    """Fold one tile of scores into the running max, sum and output, rescaling what came before."""
    m_new = torch.maximum(state.m, s.amax(dim=-1, keepdim=True))  # (..., Tq_blk, 1)
    m_safe = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))  # all -inf so far: 0
    alpha = torch.exp(state.m - m_safe)  # (..., Tq_blk, 1) rescales the old sum and output
    p = torch.exp(s - m_safe)  # (..., Tq_blk, Tk_blk); blocked scores give exactly 0
    l_new = alpha * state.l + p.sum(dim=-1, keepdim=True)
    acc_new = alpha * state.acc + p @ v_blk  # (..., Tq_blk, d_v)
    return OnlineState(m_new, l_new, acc_new)


def _initial_state(q_blk: torch.Tensor, v: torch.Tensor, dtype: torch.dtype) -> OnlineState:
    """m = -inf, l = 0, acc = 0 for every query row of a block (batch dims broadcast like matmul)."""
    lead = torch.broadcast_shapes(q_blk.shape[:-2], v.shape[:-2])
    rows = q_blk.size(-2)
    m = torch.full((*lead, rows, 1), NEG_INF, dtype=dtype, device=q_blk.device)
    zeros = torch.zeros((*lead, rows, 1), dtype=dtype, device=q_blk.device)
    acc = torch.zeros((*lead, rows, v.size(-1)), dtype=dtype, device=q_blk.device)
    return OnlineState(m, zeros, acc)


def _walk(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None,
    is_causal: bool,
    scale: float,
    block_q: int,
    block_k: int,
) -> Iterator[tuple[int, int, tuple[int, int], tuple[int, int], torch.Tensor | None, OnlineState]]:
    """Yield (i, j, rows, cols, tile scores or None if skipped, state) after every tile step."""
    dtype = _acc_dtype(q.dtype)
    t_q, t_k = q.size(-2), k.size(-2)
    for i, r0 in enumerate(range(0, t_q, block_q)):
        rows = (r0, min(r0 + block_q, t_q))
        q_blk = q[..., rows[0] : rows[1], :].to(dtype)  # (..., Tq_blk, d)
        state = _initial_state(q_blk, v, dtype)
        for j, c0 in enumerate(range(0, t_k, block_k)):
            cols = (c0, min(c0 + block_k, t_k))
            if is_causal and cols[0] > rows[1] - 1:  # every key of the tile is after every query
                yield i, j, rows, cols, None, state
                continue
            k_blk = k[..., cols[0] : cols[1], :].to(dtype)  # (..., Tk_blk, d)
            v_blk = v[..., cols[0] : cols[1], :].to(dtype)  # (..., Tk_blk, d_v)
            mask_blk = _mask_tile(attn_mask, rows, cols)
            s = _tile_scores(q_blk, k_blk, scale, mask_blk, is_causal, rows, cols)
            state = online_update(state, s, v_blk)
            yield i, j, rows, cols, s, state
        if t_k == 0:
            yield i, -1, rows, (0, 0), None, state


def tiled_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    block_q: int = 128,
    block_k: int = 128,
) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v computed tile by tile, never holding the T_q x T_k matrix."""
    _check_blocks(block_q, block_k)
    scale = default_scale(q, scale)
    blocks: list[torch.Tensor] = []
    last: OnlineState | None = None
    last_i = -1
    for i, _j, _rows, _cols, _s, state in _walk(q, k, v, attn_mask, is_causal, scale, block_q, block_k):
        if i != last_i and last is not None:
            blocks.append(last.normalised())
        last, last_i = state, i
    if last is not None:
        blocks.append(last.normalised())
    if not blocks:  # T_q == 0
        lead = torch.broadcast_shapes(q.shape[:-2], v.shape[:-2])
        return torch.zeros((*lead, 0, v.size(-1)), dtype=v.dtype, device=q.device)
    return torch.cat(blocks, dim=-2).to(v.dtype)  # (..., T_q, d_v)


def tiled_trace(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    block_q: int = 2,
    block_k: int = 2,
) -> TiledTrace:
    """Run the tiled algorithm on a small example and keep m, l and the partial output of every step."""
    _check_blocks(block_q, block_k)
    scale = default_scale(q, scale)
    steps: list[TiledStep] = []
    finals: dict[int, torch.Tensor] = {}
    for i, j, rows, cols, s, state in _walk(q, k, v, attn_mask, is_causal, scale, block_q, block_k):
        skipped = s is None
        if skipped:  # a hidden tile: show it as all -inf, nothing computed
            s = torch.full(
                (*state.m.shape[:-1], cols[1] - cols[0]), NEG_INF, dtype=state.m.dtype, device=state.m.device
            )
        out = state.normalised()
        steps.append(TiledStep(i, j, rows, cols, skipped, s, state.m, state.l, state.acc, out))
        finals[i] = out
    if finals:
        output = torch.cat([finals[i] for i in sorted(finals)], dim=-2).to(v.dtype)
    else:
        output = tiled_attention(q, k, v, attn_mask, is_causal, scale, block_q, block_k)
    return TiledTrace(steps, output, int(block_q), int(block_k), scale)


@dataclass(frozen=True)
class RowStats:
    """One query row of the current block: its running max and sum before and after a step."""

    row: int  # the query's index in the whole sequence
    m_before: float  # -inf: nothing seen yet
    m_after: float
    l_before: float
    l_after: float

    @property
    def alpha(self) -> float | None:
        """exp(m - m'): what the old sum and output are rescaled by (None before anything was seen)."""
        if math.isinf(self.m_after) or math.isinf(self.m_before):
            return None
        return math.exp(self.m_before - self.m_after)


def step_stats(trace: TiledTrace, s: int) -> list[RowStats]:
    """The running statistics of step s (1-based) for each row of its query block, before and after the tile."""
    cur = trace.steps[s - 1]
    prev = trace.steps[s - 2] if s > 1 and trace.steps[s - 2].q_block == cur.q_block else None
    rows = range(cur.q_rows[0], cur.q_rows[1])
    m_before = prev.m.flatten().tolist() if prev else [NEG_INF] * len(rows)
    l_before = prev.l.flatten().tolist() if prev else [0.0] * len(rows)
    after = zip(cur.m.flatten().tolist(), cur.l.flatten().tolist(), strict=True)
    return [RowStats(r, mb, ma, lb, la) for r, mb, lb, (ma, la) in zip(rows, m_before, l_before, after, strict=True)]


def assembled(trace: TiledTrace, s: int) -> torch.Tensor:
    """The output as far as step s has built it: each finished or started block's rows, NaN elsewhere."""
    out = torch.full_like(trace.output, float("nan"))
    for step in trace.steps[:s]:
        out[..., step.q_rows[0] : step.q_rows[1], :] = step.out
    return out
