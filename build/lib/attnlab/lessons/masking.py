"""Masking (seeds 003 and 004): the causal triangle, one parallel pass, and -inf vs -1e9 in low precision."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.attention import attention_steps, causal_mask
from attnlab.tokens import embed

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
FILLS: tuple[str, ...] = ("-inf", "-1e9", "min")
BLANK_ROWS: tuple[str, ...] = ("none", "first", "last")
D_MODEL = 8


def visible(tokens: list[str]) -> list[list[str]]:
    """Row i: the tokens query i may see under the causal mask (itself and everything before)."""
    return [tokens[: i + 1] for i in range(len(tokens))]


@dataclass(frozen=True)
class ParallelCheck:
    """The causal pass over the whole sentence against T separate passes over each prefix."""

    parallel: torch.Tensor  # (T, d) output rows of one masked pass
    sequential: torch.Tensor  # (T, d) row i from attention over tokens[:i+1] alone
    row_diff: list[float]  # per row max |parallel - sequential|
    weights: torch.Tensor  # (T, T) causal weights

    @property
    def drawn_weights(self) -> torch.Tensor:
        """(T, T) weights with the cells the mask blocks set to -inf, so a chart draws them as blocked."""
        t = self.weights.size(-1)
        return self.weights.masked_fill(~causal_mask(t, t), float("-inf"))


def parallel_vs_sequential(tokens: list[str], seed: int = 0, d_model: int = D_MODEL) -> ParallelCheck:
    """All T prediction steps in one masked product give the same rows as running them one at a time."""
    x = embed(tokens, d_model, seed)
    steps = attention_steps(x, x, x, is_causal=True)
    rows = []
    for i in range(len(tokens)):
        prefix = x[: i + 1]
        rows.append(attention_steps(prefix[-1:], prefix, prefix).output[0])
    sequential = torch.stack(rows) if rows else torch.empty(0, d_model, dtype=x.dtype)
    diffs = [float((steps.output[i] - sequential[i]).abs().max()) for i in range(len(tokens))]
    return ParallelCheck(steps.output, sequential, diffs, steps.weights)


def fill_value(fill: str, dtype: torch.dtype) -> float:
    """The number a mask writes into blocked cells: -inf, the seeds' -1e9, or the dtype's most negative finite."""
    if fill == "-inf":
        return float("-inf")
    if fill == "-1e9":
        return -1e9
    if fill == "min":
        return float(torch.finfo(dtype).min)
    raise ValueError(f"unknown fill {fill!r}; choose from {FILLS}")


def stored(value: float, dtype: torch.dtype) -> float:
    """What `value` becomes once it is a tensor of `dtype` (-1e9 overflows float16 to -inf)."""
    return float(torch.tensor(value, dtype=torch.float64).to(dtype))


def demo_mask(t: int, blank: str) -> torch.Tensor:
    """The causal mask (True = may attend), with the first or last query row blocked entirely if asked."""
    mask = causal_mask(t, t)
    if t and blank == "first":
        mask[0] = False
    elif t and blank == "last":
        mask[-1] = False
    return mask


def demo_scores(tokens: list[str], seed: int = 0, d_model: int = D_MODEL) -> torch.Tensor:
    """(T, T) float64 scores X X^T / sqrt(d) from the tokens' embeddings."""
    x = embed(tokens, d_model, seed)
    return x @ x.T / math.sqrt(d_model)


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    """exp(x - max) / sum, written out: a row of only -inf gives 0/0 = NaN (torch.softmax does the same)."""
    shifted = x - x.amax(-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(-1, keepdim=True)


@dataclass(frozen=True)
class FillResult:
    """One (dtype, fill) cell of the comparison, computed on the CPU."""

    dtype: str
    fill: str
    error: str | None  # masked_fill refused the value (float16 cannot hold -1e9)
    stored: float  # the fill as the dtype holds it
    weights: torch.Tensor | None  # (T, T) naive softmax after masked_fill, in float64 for display
    allowed_err: float | None  # max |w - float64 reference| over rows that see something
    leak: float | None  # largest weight that landed on a blocked key in a row that sees something
    blank_row: list[float] | None  # the naive softmax of the fully blocked row (NaN or 1/T, ...)
    sdpa_blank_row: list[float] | None  # SDPA's weights for that row (0: it saw nothing)


def sdpa_weights(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The attention weights SDPA uses, read back by attending to the identity (V = I, scale 1, q.k = scores)."""
    t = scores.size(-1)
    # q = scores rows, k = I: q k^T = scores; v = I returns the weights themselves.
    eye = torch.eye(t, dtype=scores.dtype)
    return F.scaled_dot_product_attention(
        scores[None, None], eye[None, None], eye[None, None], attn_mask=mask, scale=1.0
    )[0, 0]


def fill_result(scores64: torch.Tensor, mask: torch.Tensor, dtype_name: str, fill: str) -> FillResult:
    """masked_fill(~mask, fill) in `dtype`, then softmax: what comes out, against float64 with -inf."""
    dtype = DTYPES[dtype_name]
    value = fill_value(fill, dtype)
    scores = scores64.to(dtype)
    blocked_rows = ~mask.any(-1)
    seeing = ~blocked_rows
    reference = torch.softmax(scores64.masked_fill(~mask, float("-inf")), -1)
    try:
        masked = scores.masked_fill(~mask, value)
    except RuntimeError as exc:
        return FillResult(dtype_name, fill, str(exc).strip(), stored(value, dtype), None, None, None, None, None)
    w = naive_softmax(masked).to(torch.float64)
    allowed_err = float((w[seeing] - reference[seeing]).abs().max()) if seeing.any() else 0.0
    leak = float(w[seeing].masked_fill(mask[seeing], 0).max()) if seeing.any() else 0.0
    blank = sdpa_blank = None
    if blocked_rows.any():
        r = int(blocked_rows.nonzero()[0])
        blank = w[r].tolist()
        sdpa_blank = sdpa_weights(scores, mask)[r].to(torch.float64).tolist()
    return FillResult(dtype_name, fill, None, stored(value, dtype), w, allowed_err, leak, blank, sdpa_blank)


def fill_table(tokens: list[str], blank: str, seed: int = 0) -> list[FillResult]:
    """Every dtype x fill on the tokens' causal scores (with the blank row blocked if asked)."""
    scores = demo_scores(tokens, seed)
    mask = demo_mask(len(tokens), blank)
    return [fill_result(scores, mask, d, f) for d in DTYPES for f in FILLS]


def row_kind(row: list[float] | None) -> tuple[str, float | None]:
    """Sum up a weight row: ('nan', None), ('zeros', 0.0), ('uniform', w) or ('other', None)."""
    if row is None:
        return "none", None
    if all(math.isnan(x) for x in row):
        return "nan", None
    if all(x == 0 for x in row):
        return "zeros", 0.0
    if row and max(row) - min(row) < 1e-3 * max(abs(max(row)), 1e-12):
        return "uniform", row[0]
    return "other", None
