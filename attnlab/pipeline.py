"""From the Playground's settings to every matrix it draws, and the check against PyTorch.

Pure torch: the page reads its widgets into a `LabConfig`, calls `run_lab`, and draws.
Edited weight cells are stored as overrides on top of the seeded weights, so the same
settings plus the same overrides give the same matrices anywhere (and fit in a URL).
Settings a text cannot honour (RoPE on an odd head width, a prefix longer than the text,
documents with no `<EOS>` between them, key/value heads that do not divide the heads) are
replaced by `settle`, and the run keeps what it used and why (`LabResult.fallbacks`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import torch

from attnlab import masks
from attnlab.limits import MAX_WEIGHT
from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, multi_head_steps
from attnlab.params import Invalid, parse_number
from attnlab.tokens import MAX_TOKENS, input_matrix, tokenize

Edits = dict[tuple[str, int, int], float]


ROPES = ("none", "half", "interleaved")  # no rotation, rotate-half (Llama, GPT-NeoX), interleaved pairs (GPT-J)
CAUSAL_MASKS = ("causal", "window", "sinks", "documents")  # the rules under which no query sees a later key


@dataclass(frozen=True)
class LabConfig:
    """Everything that determines the Playground's matrices.

    `mask` names a rule of `attnlab.masks` and wins over `causal`; None keeps the classic switch (`causal` True is
    the causal mask, False none). `window`, `sinks` and `prefix` matter only to the rules that read them.
    """

    text: str = "the cat sat on the mat"
    d_model: int = 8
    heads: int = 2
    causal: bool = False
    seed: int = 0
    init: str = "random"
    positions: bool = False
    edits: tuple[tuple[tuple[str, int, int], float], ...] = field(default=())
    scaled: bool = True  # False = no 1/sqrt(d_k) (scale 1.0): the what-if that shows why the scale is there
    kv_heads: int | None = None  # key/value heads, a divisor of heads (None: one per query head)
    rope: str = "none"  # one of ROPES
    alibi: bool = False
    mask: str | None = None  # one of masks.KINDS, or None: from `causal`
    window: int = 3  # keys a query sees under "window" and "sinks", itself included
    sinks: int = 1  # first keys every later query keeps under "sinks"
    prefix: int = 3  # tokens every query sees under "prefix"

    @property
    def mask_kind(self) -> str:
        """The rule in force: `mask`, or the classic switch's causal/full."""
        return self.mask if self.mask is not None else ("causal" if self.causal else "full")

    @property
    def n_kv_heads(self) -> int:
        """How many key/value heads (as many as query heads unless set)."""
        return self.heads if self.kv_heads is None else self.kv_heads

    @property
    def modern(self) -> bool:
        """True when anything of contract 13 is on: shared key/value heads, RoPE, ALiBi, a rule beyond causal."""
        classic = self.n_kv_heads == self.heads and self.rope == "none" and not self.alibi
        return not classic or self.mask_kind not in ("full", "causal")


@dataclass(frozen=True)
class Fallback:
    """A setting this text cannot honour and what the run used instead (locale key `lab.fallback_<reason>`)."""

    name: str  # the URL parameter
    asked: str
    used: str
    reason: str
    fields: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MaskRule:
    """The mask a run used: its rule, the numbers the rule reads and the (T, T) mask it gives (True = may attend)."""

    kind: str
    window: int
    sinks: int
    prefix: int
    documents: tuple[int, ...] | None  # one id per token for "documents"
    mask: torch.Tensor  # (T, T) bool

    @property
    def allowed(self) -> int:
        """How many (query, key) pairs the rule lets through."""
        return masks.allowed_pairs(self.mask)

    def mask_mod(self) -> masks.MaskMod:
        """The same rule in FlexAttention's form."""
        return masks.mask_mod(self.kind, **self.arguments())

    def arguments(self) -> dict:
        """The keyword arguments `masks.build` and `masks.mask_mod` take for this rule."""
        if self.kind in ("window", "sinks"):
            return {"window": self.window, "sinks": self.sinks if self.kind == "sinks" else 0}
        if self.kind == "prefix":
            return {"prefix": self.prefix}
        return {"documents": list(self.documents)} if self.kind == "documents" else {}


@dataclass(frozen=True)
class Check:
    """Our step-by-step output against PyTorch's fused attention on the same numbers."""

    sdpa_per_head: list[float]  # max |ours - F.scaled_dot_product_attention| for each head (enable_gqa, same mask)
    mha: float  # max |ours - the reference| after W_O (see `after`)
    tolerance: float  # the largest |difference| allowed: attnlab.tolerance.bound of the outputs compared
    after: str = "mha"  # "mha": nn.MultiheadAttention; "sdpa": SDPA's heads through W_O (it cannot hold RoPE or GQA)
    flex_per_head: list[float] | None = None  # FlexAttention (eager) per head, when asked for and where it runs
    flex_error: str | None = None  # why FlexAttention could not run, if it could not

    @property
    def worst(self) -> float:
        """The largest difference anywhere."""
        return max(self.sdpa_per_head + [self.mha] + (self.flex_per_head or []))

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
    config: LabConfig | None = None  # the settings the run used (after `settle`)
    fallbacks: tuple[Fallback, ...] = ()  # what it could not honour, and what it used instead
    rule: MaskRule | None = None


def seeded_weights(config: LabConfig) -> MultiHeadWeights:
    """The weights before any edit: random from the seed, identity or zeros (W_K, W_V pooled for shared heads)."""
    return MultiHeadWeights.random(
        config.d_model, seed=config.seed, init=config.init, n_heads=config.heads, n_kv_heads=config.n_kv_heads
    )


def apply_edits(base: MultiHeadWeights, edits: Edits) -> MultiHeadWeights:
    """Override single cells of the seeded weights (cells outside the matrix are ignored)."""
    mats = {name: m.clone() for name, m in base.as_dict().items()}
    for (name, r, c), value in edits.items():
        if name in mats and 0 <= r < mats[name].size(0) and 0 <= c < mats[name].size(1):
            mats[name][r, c] = value
    return MultiHeadWeights(**mats)


def kv_divisor(heads: int, kv_heads: int) -> int:
    """The largest divisor of `heads` not above `kv_heads` (at least 1): the key/value heads a setting can use."""
    return max(h for h in range(1, max(1, min(kv_heads, heads)) + 1) if heads % h == 0)


def settle(config: LabConfig, tokens: list[str]) -> tuple[LabConfig, tuple[Fallback, ...]]:
    """The settings this text can honour, and what was replaced: each fall-back says what it used instead."""
    out: list[Fallback] = []
    used = config
    if config.n_kv_heads < 1 or config.heads % config.n_kv_heads:
        kv = kv_divisor(config.heads, config.n_kv_heads)
        out.append(Fallback("kv_heads", str(config.n_kv_heads), str(kv), "kv_heads", (("heads", str(config.heads)),)))
        used = replace(used, kv_heads=kv)
    d_k = config.d_model // max(1, config.heads)
    if config.rope != "none" and d_k % 2:
        out.append(Fallback("rope", config.rope, "none", "rope_odd", (("d_k", str(d_k)),)))
        used = replace(used, rope="none")
    kind, t = config.mask_kind, len(tokens)
    if kind == "prefix" and config.prefix > t:
        out.append(Fallback("prefix", str(config.prefix), str(t), "prefix_long", (("t", str(t)),)))
        used = replace(used, prefix=t)
    if kind == "documents" and t and masks.END_OF_DOCUMENT not in tokens:
        out.append(Fallback("mask", kind, "causal", "documents_one", (("end", masks.END_OF_DOCUMENT),)))
        used = replace(used, mask="causal")
    return used, tuple(out)


def mask_rule(config: LabConfig, tokens: list[str]) -> MaskRule:
    """The (T, T) mask of the settings' rule for these tokens (documents end after each `<EOS>`)."""
    kind = config.mask_kind
    documents = tuple(masks.documents_from_tokens(tokens)) if kind == "documents" else None
    rule = MaskRule(kind, config.window, config.sinks, config.prefix, documents, torch.zeros(0, dtype=torch.bool))
    return replace(rule, mask=masks.build(kind, len(tokens), **rule.arguments()))


def classic(config: LabConfig) -> LabConfig:
    """The same settings as classic multi-head attention: one key/value head per query head, no RoPE or ALiBi, and
    the causal mask for every rule that never shows a later key (none otherwise), as nn.MultiheadAttention has it."""
    causal = config.mask_kind in CAUSAL_MASKS
    return replace(config, kv_heads=None, rope="none", alibi=False, mask=None, causal=causal)


def run_lab(config: LabConfig) -> LabResult:
    """Tokenize, embed, project and attend: every stage for the Playground's settings."""
    typed = tokenize(config.text)
    tokens = typed[:MAX_TOKENS]
    used, fallbacks = settle(config, tokens)
    x = input_matrix(tokens, used.d_model, used.seed, used.positions)  # (T, D)
    weights = apply_edits(seeded_weights(used), dict(used.edits))
    scale = None if used.scaled else 1.0
    rule = mask_rule(used, tokens)
    beyond = rule.kind not in ("full", "causal")  # the classic two stay SDPA's own flag (bit for bit as before)
    steps = multi_head_steps(
        x,
        x,
        weights,
        used.heads,
        n_kv_heads=used.n_kv_heads,
        rope=None if used.rope == "none" else used.rope,
        alibi=used.alibi,
        is_causal=rule.kind == "causal",
        attn_mask=rule.mask if beyond else None,
        scale=scale,
    )
    return LabResult(tokens, len(typed), x, weights, steps, used, fallbacks, rule)


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
