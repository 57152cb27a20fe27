"""From the Playground's settings to every matrix it draws, and the check against PyTorch.

Pure torch: the page reads its widgets into a `LabConfig`, calls `run_lab`, and draws.
Edited weight cells are stored as overrides on top of the seeded weights, so the same
settings plus the same overrides give the same matrices anywhere (and fit in a URL).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from attnlab.attention import causal_mask
from attnlab.limits import MAX_WEIGHT, TOL_FLOAT64
from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, multi_head_steps
from attnlab.params import Invalid, parse_number
from attnlab.tokens import MAX_TOKENS, input_matrix, tokenize

TOLERANCE = TOL_FLOAT64  # float64 end to end
Edits = dict[tuple[str, int, int], float]


@dataclass(frozen=True)
class LabConfig:
    """Everything that determines the Playground's matrices."""

    text: str = "the cat sat on the mat"
    d_model: int = 8
    heads: int = 2
    causal: bool = False
    seed: int = 0
    init: str = "random"
    positions: bool = False
    edits: tuple[tuple[tuple[str, int, int], float], ...] = field(default=())
    scaled: bool = True  # False = no 1/sqrt(d_k) (scale 1.0): the what-if that shows why the scale is there


@dataclass(frozen=True)
class Check:
    """Our step-by-step output against PyTorch's fused attention on the same numbers."""

    sdpa_per_head: list[float]  # max |ours - F.scaled_dot_product_attention| for each head
    mha: float  # max |ours - nn.MultiheadAttention| after W_O
    tolerance: float

    @property
    def worst(self) -> float:
        """The largest difference anywhere."""
        return max(self.sdpa_per_head + [self.mha])

    @property
    def passed(self) -> bool:
        """True when every difference is within the tolerance."""
        return self.worst <= self.tolerance


@dataclass(frozen=True)
class LabResult:
    """Tokens, weights and every stage, for one configuration."""

    tokens: list[str]
    n_tokens_typed: int  # before the cap; more than len(tokens) means the text was cut
    x: torch.Tensor  # (T, d_model)
    weights: MultiHeadWeights
    steps: MultiHeadSteps  # heads tensors (H, T, d_k) / (H, T, T)


def seeded_weights(config: LabConfig) -> MultiHeadWeights:
    """The weights before any edit: random from the seed, identity or zeros."""
    return MultiHeadWeights.random(config.d_model, seed=config.seed, init=config.init)


def apply_edits(base: MultiHeadWeights, edits: Edits) -> MultiHeadWeights:
    """Override single cells of the seeded weights (cells outside the matrix are ignored)."""
    d = base.d_model
    mats = {name: m.clone() for name, m in base.as_dict().items()}
    for (name, r, c), value in edits.items():
        if name in mats and 0 <= r < d and 0 <= c < d:
            mats[name][r, c] = value
    return MultiHeadWeights(**mats)


def run_lab(config: LabConfig) -> LabResult:
    """Tokenize, embed, project and attend: every stage for the Playground's settings."""
    typed = tokenize(config.text)
    tokens = typed[:MAX_TOKENS]
    x = input_matrix(tokens, config.d_model, config.seed, config.positions)  # (T, D)
    weights = apply_edits(seeded_weights(config), dict(config.edits))
    scale = None if config.scaled else 1.0
    steps = multi_head_steps(x, x, weights, config.heads, is_causal=config.causal, scale=scale)
    return LabResult(tokens, len(typed), x, weights, steps)


def check_against_torch(result: LabResult, causal: bool) -> Check:
    """Max |difference| per head against SDPA and after W_O against nn.MultiheadAttention."""
    heads = result.steps.heads
    sdpa = F.scaled_dot_product_attention(heads.q, heads.k, heads.v, is_causal=causal)  # (H, T, d_k)
    per_head = (sdpa - heads.output).abs().amax(dim=(-2, -1)).tolist()
    mha = result.weights.to_torch(result.steps.n_heads)
    t = result.x.size(0)
    blocked = ~causal_mask(t, t) if causal else None  # nn.MultiheadAttention: True = may NOT attend
    x = result.x[None]  # (1, T, D)
    with torch.no_grad():
        ref, _ = mha(x, x, x, attn_mask=blocked, need_weights=False)
    return Check(per_head, float((ref[0] - result.steps.output).abs().max()), TOLERANCE)


def validate_cell(raw: object) -> float:
    """A weight cell as a float, or Invalid naming why it is refused (blank, not a number, too big)."""
    if raw is None or (isinstance(raw, float) and math.isnan(raw)) or str(raw).strip() == "":
        raise Invalid("cell_empty", None)
    text = str(raw).strip()
    try:
        value = float(text)
    except ValueError:
        raise Invalid("cell_not_number", None) from None
    if not math.isfinite(value):
        raise Invalid("cell_not_finite", None)
    if abs(value) > MAX_WEIGHT:
        raise Invalid("cell_too_large", None, cap=f"{MAX_WEIGHT:g}")
    return value


@dataclass(frozen=True)
class CellProblem:
    """An edited cell that was refused: which matrix, where, what was typed and why."""

    name: str
    row: int
    col: int
    raw: str
    reason: str


def merge_editor_changes(
    edits: Edits, name: str, edited_rows: dict, row_ids: list[int], col_ids: dict[str, int]
) -> tuple[Edits, list[CellProblem]]:
    """Fold st.data_editor's `edited_rows` into the overrides; refused cells keep their old value.

    `row_ids[i]` is the matrix row shown at editor row i, `col_ids[column name]` its column.
    """
    merged = dict(edits)
    problems = []
    for shown_row, changes in edited_rows.items():
        r = row_ids[int(shown_row)]
        for col_name, raw in changes.items():
            if col_name not in col_ids:
                continue
            c = col_ids[col_name]
            try:
                merged[(name, r, c)] = validate_cell(raw)
            except Invalid as bad:
                problems.append(CellProblem(name, r, c, str(raw), bad.reason))
    return merged, problems


_EDIT = re.compile(r"^(q|k|v|o)(\d{1,2})\.(\d{1,2})=(.+)$")


def encode_edits(edits: Edits) -> str:
    """Overrides as compact URL text, e.g. `q0.1=0.5;o3.3=-2` (repr keeps every float exact)."""
    return ";".join(f"{name[2]}{r}.{c}={value!r}" for (name, r, c), value in sorted(edits.items()))


def decode_edits(text: str, d_model: int) -> tuple[Edits, list[str]]:
    """Parse `encode_edits` text; returns the overrides and the items that could not be used."""
    edits: Edits = {}
    bad = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        match = _EDIT.match(item)
        try:
            if not match:
                raise ValueError(item)
            letter, r, c, raw = match.groups()
            r, c = int(r), int(c)
            value = parse_number(raw)
            if r >= d_model or c >= d_model or abs(value) > MAX_WEIGHT:
                raise ValueError(item)
        except ValueError:
            bad.append(item[:40])
            continue
        edits[(f"w_{letter}", r, c)] = value
    return edits, bad
