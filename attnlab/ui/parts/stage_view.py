"""How each of the eleven stages looks for a `StageView`: its formula, its shape line and its figure.

`attnlab.ui.parts.stages` puts these together into the table keyed by the core's stage names;
this module only knows how to draw a stage for what is on screen (which heads, a picked query
row, a trained model's layer and biases).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch

from attnlab.figures import dim_labels, dot_product_hover, matrices_figure, matrix_figure
from attnlab.multihead import MultiHeadSteps
from attnlab.pipeline import MaskRule
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import shape_text

HOVER_TERMS_MAX_T = 16  # past this, spelling out every dot product costs more than it shows


@dataclass(frozen=True)
class StageView:
    """What the stage table draws: the tokens, X, every computed stage, which heads are shown and how X was made."""

    tokens: list[str]
    x: torch.Tensor  # (T, d_model)
    steps: MultiHeadSteps
    shown: tuple[int, ...]  # head indices on screen (0-based)
    causal: bool
    query: int | None = None  # a picked query row, outlined in every stage
    positions: bool = False  # X = E + PE
    bias: bool = False  # projections with a bias (a trained model): Q = X W_Q + b_Q
    layer: int | None = None  # a trained model's layer (0-based): X is its embeddings or the layer before's output
    rule: MaskRule | None = None  # the Playground's mask rule (window, sinks, prefix, documents); None: `causal`

    @property
    def one(self) -> int | None:
        """The head, when exactly one is shown."""
        return self.shown[0] if len(self.shown) == 1 and self.steps.n_heads > 1 else None

    @property
    def sub(self) -> str:
        """The subscript of per-head symbols: h for several heads, the head's number for one."""
        return "h" if self.one is None else str(self.one + 1)

    @property
    def t_len(self) -> int:
        return len(self.tokens)

    @property
    def d_model(self) -> int:
        return self.steps.q.size(-1)

    def titles(self) -> list[str]:
        """Panel titles: Head 1, Head 2, ..."""
        return [t("lab.check_head", h=h + 1) for h in self.shown]

    def per_head(self, tensor: torch.Tensor) -> list[np.ndarray]:
        """One matrix per shown head from an (H, ...) tensor."""
        return [tensor[h].numpy() for h in self.shown]

    def head_dims(self, h: int) -> list[str]:
        """The d_model column labels that head h owns."""
        d_k = self.steps.d_k
        return dim_labels(self.d_model)[h * d_k : (h + 1) * d_k]

    def head_breaks(self, width: int | None = None) -> list[int]:
        """The columns where a new head's block starts (of d_model, or of K's and V's narrower width)."""
        d_k = self.steps.d_k
        return list(range(d_k, self.d_model if width is None else width, d_k))

    def block(self, letter: str, h: int) -> int:
        """Which column block of Q, K or V head h reads: its own, or for K and V the key/value head it shares."""
        return self.steps.kv_head(h) if letter in ("K", "V", "k", "v") else h


def by_token(view: StageView) -> dict:
    """Axis names and the outlined row of a (T, d) matrix."""
    return dict(row_name=t("stages.token"), col_name=t("stages.dim"), highlight_row=view.query)


def square(view: StageView) -> dict:
    """Axis names and the outlined row of a (T, T) matrix."""
    return dict(row_name=t("stages.query"), col_name=t("stages.key"), highlight_row=view.query)


def plus_bias(letter: str, view: StageView) -> str:
    """'+ b_Q' when the projections carry a bias."""
    return rf" + b^{letter}" if view.bias else ""


# --------------------------------------------------------------------------------------------- formulas


def x_formula(view: StageView) -> str:
    if view.layer == 0:
        return r"X = \mathrm{LayerNorm}(E_{\mathrm{token}} + E_{\mathrm{position}} + E_{\mathrm{segment}})"
    if view.layer is not None:
        return rf"X = Y^{{({view.layer})}}"
    return r"X = E + PE" if view.positions else r"X = E"


def x_note(view: StageView) -> str:
    """Where X came from: hashed embeddings here, a trained model's embeddings or its layer before."""
    if view.layer == 0:
        return t("stages.x_note_trained_first")
    if view.layer is not None:
        return t("stages.x_note_trained", before=view.layer)
    return t("stages.x_note")


def projection_formula(letter: str) -> Callable[[StageView], str]:
    """Q = X W^Q for all heads, or head h's slice of the columns of W^Q."""

    def formula(view: StageView) -> str:
        if view.one is None:
            return rf"{letter} = X\,W^{letter}" + plus_bias(letter, view)
        h, b, d_k = view.one, view.block(letter, view.one), view.steps.d_k
        return rf"{letter}_{{{h + 1}}} = X\,W^{letter}_{{[:,\,{b * d_k}:{(b + 1) * d_k}]}}" + plus_bias(letter, view)

    return formula


def scores_formula(view: StageView) -> str:
    return rf"S_{view.sub} = Q_{view.sub} K_{view.sub}^\top"


def scaled_formula(view: StageView) -> str:
    s, scale, d_k = view.sub, view.steps.heads.scale, view.steps.d_k
    return rf"\frac{{S_{s}}}{{\sqrt{{d_k}}}} = S_{s} \times \frac{{1}}{{\sqrt{{{d_k}}}}} = S_{s} \times {scale:.4f}"


def mask_formula(view: StageView) -> str:
    if view.causal:
        return r"S'' = S' + M,\quad M_{ij} = \begin{cases}0 & j \le i\\ -\infty & j > i\end{cases}"
    return r"S'' = S' + M,\quad M = 0"


def weights_formula(view: StageView) -> str:
    return (
        rf"A_{view.sub} = \mathrm{{softmax}}(S'') ,\quad A_{{ij}} = "
        r"\frac{e^{S''_{ij} - m_i}}{\sum_{j'} e^{S''_{ij'} - m_i}},\ m_i = \max_j S''_{ij}"
    )


def z_formula(view: StageView) -> str:
    return rf"Z_{view.sub} = A_{view.sub} V_{view.sub}"


def concat_formula(view: StageView) -> str:
    return r"\mathrm{Concat}(Z_1, \dots, Z_H)"


def output_formula(view: StageView) -> str:
    return r"\mathrm{Output} = \mathrm{Concat}(Z_1, \dots, Z_H)\, W^O" + plus_bias("O", view)


# --------------------------------------------------------------------------------------------- shapes


def model_shape(name: str) -> Callable[[StageView], str]:
    """(T, d_model)."""
    return lambda view: shape_text(name, ["T", "d_model"], [view.t_len, view.d_model])


def projection_shape(letter: str) -> Callable[[StageView], str]:
    """(T, d_model) for all heads, (T, d_k) for one."""

    def shape(view: StageView) -> str:
        steps = view.steps
        if view.one is None and letter in ("K", "V") and steps.n_kv_heads != steps.n_heads:
            return shape_text(letter, ["T", "H_kv·d_k"], [view.t_len, steps.n_kv_heads * steps.d_k])
        if view.one is None:
            return shape_text(letter, ["T", "d_model"], [view.t_len, view.d_model])
        return shape_text(f"{letter}_{view.one + 1}", ["T", "d_k"], [view.t_len, steps.d_k])

    return shape


def square_shape(name: str) -> Callable[[StageView], str]:
    """(T, T)."""
    return lambda view: shape_text(name, ["T", "T"], [view.t_len, view.t_len])


def z_shape(view: StageView) -> str:
    return shape_text("Z", ["T", "d_k"], [view.t_len, view.steps.d_k])


def concat_shape(view: StageView) -> str:
    return shape_text("Concat", ["T", "H·d_k"], [view.t_len, view.d_model])


# --------------------------------------------------------------------------------------------- figures


def x_figure(view: StageView) -> go.Figure:
    return matrix_figure(view.x.numpy(), view.tokens, dim_labels(view.d_model), **by_token(view))


def model_figure(pick: Callable[[MultiHeadSteps], torch.Tensor]) -> Callable[[StageView], go.Figure]:
    """A (T, d_model) stage with a rule where each head's columns start."""

    def figure(view: StageView) -> go.Figure:
        m = pick(view.steps).numpy()  # (T, d_model), or (T, H_kv·d_k) for shared keys and values
        cols = dim_labels(m.shape[1])
        return matrix_figure(m, view.tokens, cols, col_breaks=view.head_breaks(m.shape[1]), **by_token(view))

    return figure


def projection_figure(letter: str) -> Callable[[StageView], go.Figure]:
    """Q (K, V) for all heads with their column blocks, or one head's slice."""
    full = model_figure(lambda steps: getattr(steps, letter))

    def figure(view: StageView) -> go.Figure:
        if view.one is None:
            return full(view)
        part = getattr(view.steps.heads, letter)[view.one].numpy()
        d_k, b = view.steps.d_k, view.block(letter, view.one)
        cols = dim_labels(getattr(view.steps, letter).size(-1))[b * d_k : (b + 1) * d_k]
        return matrix_figure(part, view.tokens, cols, **by_token(view))

    return figure


def square_figure(name: str, **kw) -> Callable[[StageView], go.Figure]:
    """One (T, T) matrix per shown head, from the per-head stage `name`."""

    def figure(view: StageView) -> go.Figure:
        mats = view.per_head(getattr(view.steps.heads, name))
        blocked = dict(blocked_text=t("stages.blocked")) if name in ("masked", "shifted") else {}
        return matrices_figure(mats, view.titles(), view.tokens, view.tokens, **square(view), **blocked, **kw)

    return figure


def scores_figure(view: StageView) -> go.Figure:
    """The scores, with the dot product behind each cell in the hover for short texts."""
    heads = view.steps.heads
    hover = None
    if view.t_len <= HOVER_TERMS_MAX_T:
        hover = [dot_product_hover(heads.q[h].numpy(), heads.k[h].numpy(), "q·k =") for h in view.shown]
    return matrices_figure(
        view.per_head(heads.scores), view.titles(), view.tokens, view.tokens, hover_extra=hover, **square(view)
    )


def z_figure(view: StageView) -> go.Figure:
    """Each shown head's output Z (T, d_k)."""
    mats = view.per_head(view.steps.heads.output)
    cols = dim_labels(view.steps.d_k) if view.one is None else view.head_dims(view.one)
    return matrices_figure(mats, view.titles(), view.tokens, cols, **by_token(view))


# --------------------------------------------------------------------------------------------- notes


def note(key: str, **fields: Callable[[StageView], object]) -> Callable[[StageView], str]:
    """A stage note from a locale key, its fields computed from the view."""
    return lambda view: t(key, **{name: field(view) for name, field in fields.items()})


def split_note(view: StageView) -> str | None:
    return t("stages.split_note", d_k=view.steps.d_k) if view.one is None else None


def mask_note(view: StageView) -> str:
    return t("stages.mask_causal" if view.causal else "stages.mask_none")
