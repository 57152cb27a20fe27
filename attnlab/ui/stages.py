"""Draw every stage of multi-head attention, in order, for one head or all heads side by side."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab.figures import dim_labels, grid_figure, matrix_figure
from attnlab.pipeline import LabResult, score_hover
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, keep_choice, shape_text, stage

HOVER_TERMS_MAX_T = 16  # past this, spelling out every dot product costs more than it shows


def head_picker(n_heads: int, key: str) -> int:
    """0 = all heads side by side, h = only head h (1-based, as the UI counts)."""
    keep_choice(key, range(n_heads + 1), 0)
    return st.segmented_control(
        t("stages.view"),
        list(range(n_heads + 1)),
        key=key,
        required=True,
        persist_state="session",
        format_func={h: t("stages.all_heads") if h == 0 else t("lab.check_head", h=h) for h in range(n_heads + 1)}.get,
    )


def _draw(mats: list[np.ndarray], rows, cols, key: str, *, titles=None, hover=None, **kw) -> None:
    """One matrix, or several in a grid with a shared colour scale."""
    if len(mats) == 1:
        fig = matrix_figure(mats[0], rows, cols, hover_extra=hover[0] if hover else None, **kw)
    else:
        fig = grid_figure(mats, titles, rows, cols, hover_extra=hover, **kw)
    chart(fig, key)


def _head_breaks(d_model: int, d_k: int) -> list[int]:
    """The columns where a new head's block starts."""
    return list(range(d_k, d_model, d_k))


def render(result: LabResult, view: int, causal: bool, query: int | None = None) -> None:
    """Stages 1 to 11 of attention with formulas, shapes, hover and the chosen head view; `query` outlines a row."""
    steps, tokens = result.steps, result.tokens
    heads, n_heads, d_k = steps.heads, steps.n_heads, steps.d_k
    t_len, d_model = len(tokens), result.weights.d_model
    shown = list(range(n_heads)) if view == 0 else [view - 1]
    titles = [t("lab.check_head", h=h + 1) for h in shown]
    sub = "h" if view == 0 else str(view)
    tok, dim = t("stages.token"), t("stages.dim")
    query_name, key_name = t("stages.query"), t("stages.key")
    by_token = dict(row_name=tok, col_name=dim, highlight_row=query)
    head_dims = {h: dim_labels(d_model)[h * d_k : (h + 1) * d_k] for h in shown}

    def pick(tensor) -> list[np.ndarray]:
        return [tensor[h].numpy() for h in shown]

    stage(
        1,
        t("stages.x"),
        r"X = E + PE" if st.session_state.get("lab.pe") else r"X = E",
        shape_text("X", ["T", "d_model"], [t_len, d_model]),
        t("stages.x_note"),
    )
    chart(matrix_figure(result.x.numpy(), tokens, dim_labels(d_model), **by_token), "st.x")

    for number, (letter, full) in enumerate((("Q", steps.q), ("K", steps.k), ("V", steps.v)), start=2):
        if view == 0:
            stage(
                number,
                t(f"stages.{letter.lower()}"),
                rf"{letter} = X\,W^{letter}",
                shape_text(letter, ["T", "d_model"], [t_len, d_model]),
                t("stages.split_note", d_k=d_k),
            )
            breaks = _head_breaks(d_model, d_k)
            fig = matrix_figure(full.numpy(), tokens, dim_labels(d_model), **by_token, col_breaks=breaks)
            chart(fig, f"st.{letter}")
        else:
            h = view - 1
            stage(
                number,
                t(f"stages.{letter.lower()}"),
                rf"{letter}_{{{view}}} = X\,W^{letter}_{{[:,\,{h * d_k}:{(h + 1) * d_k}]}}",
                shape_text(f"{letter}_{view}", ["T", "d_k"], [t_len, d_k]),
            )
            part = getattr(heads, letter.lower())[h].numpy()
            chart(matrix_figure(part, tokens, head_dims[h], **by_token), f"st.{letter}")

    square = dict(row_name=query_name, col_name=key_name, highlight_row=query)
    scores_hover = (
        None
        if t_len > HOVER_TERMS_MAX_T
        else [score_hover(heads.q[h].numpy(), heads.k[h].numpy(), "q·k =") for h in shown]
    )
    stage(
        5,
        t("stages.scores"),
        rf"S_{sub} = Q_{sub} K_{sub}^\top",
        shape_text("S", ["T", "T"], [t_len, t_len]),
        t("stages.scores_note"),
    )
    _draw(pick(heads.scores), tokens, tokens, "st.scores", titles=titles, hover=scores_hover, **square)

    stage(
        6,
        t("stages.scaled"),
        rf"\frac{{S_{sub}}}{{\sqrt{{d_k}}}} = S_{sub} \times \frac{{1}}{{\sqrt{{{d_k}}}}}"
        rf" = S_{sub} \times {heads.scale:.4f}",
        shape_text("S'", ["T", "T"], [t_len, t_len]),
        t("stages.scaled_note"),
    )
    _draw(pick(heads.scaled), tokens, tokens, "st.scaled", titles=titles, **square)

    mask_note = t("stages.mask_causal") if causal else t("stages.mask_none")
    stage(
        7,
        t("stages.masked"),
        r"S'' = S' + M,\quad M_{ij} = \begin{cases}0 & j \le i\\ -\infty & j > i\end{cases}"
        if causal
        else r"S'' = S' + M,\quad M = 0",
        shape_text("M", ["T", "T"], [t_len, t_len]),
        mask_note,
    )
    _draw(
        pick(heads.masked),
        tokens,
        tokens,
        "st.masked",
        titles=titles,
        blocked_text=t("stages.blocked"),
        **square,
    )

    stage(
        8,
        t("stages.softmax"),
        rf"A_{sub} = \mathrm{{softmax}}(S'') ,\quad A_{{ij}} = "
        r"\frac{e^{S''_{ij} - m_i}}{\sum_{j'} e^{S''_{ij'} - m_i}},\ m_i = \max_j S''_{ij}",
        shape_text("A", ["T", "T"], [t_len, t_len]),
        t("stages.softmax_note"),
    )
    _draw(pick(heads.weights), tokens, tokens, "st.weights", titles=titles, kind="prob", **square)
    if st.toggle(t("stages.show_stable"), key="lab.show_stable"):
        _draw(
            pick(heads.shifted),
            tokens,
            tokens,
            "st.shifted",
            titles=titles,
            blocked_text=t("stages.blocked"),
            **square,
        )

    stage(
        9,
        t("stages.weighted"),
        rf"Z_{sub} = A_{sub} V_{sub}",
        shape_text("Z", ["T", "d_k"], [t_len, d_k]),
        t("stages.weighted_note"),
    )
    if view == 0:
        _draw(pick(heads.output), tokens, dim_labels(d_k), "st.z", titles=titles, **by_token)
    else:
        chart(
            matrix_figure(heads.output[view - 1].numpy(), tokens, head_dims[view - 1], **by_token),
            "st.z",
        )

    stage(
        10,
        t("stages.concat"),
        r"\mathrm{Concat}(Z_1, \dots, Z_H)",
        shape_text("Concat", ["T", "H·d_k"], [t_len, d_model]),
        t("stages.concat_note", h=n_heads),
    )
    breaks = _head_breaks(d_model, d_k)
    chart(
        matrix_figure(steps.concat.numpy(), tokens, dim_labels(d_model), **by_token, col_breaks=breaks),
        "st.concat",
    )

    stage(
        11,
        t("stages.output"),
        r"\mathrm{Output} = \mathrm{Concat}(Z_1, \dots, Z_H)\, W^O",
        shape_text("Output", ["T", "d_model"], [t_len, d_model]),
        t("stages.output_note"),
    )
    chart(matrix_figure(steps.output.numpy(), tokens, dim_labels(d_model), **by_token), "st.out")
