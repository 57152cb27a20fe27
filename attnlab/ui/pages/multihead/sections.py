"""The Multi-head page's sections: the cut into heads, every head, re-split, concat, fused QKV, dropout, PyTorch."""

import streamlit as st

from attnlab import links
from attnlab.anatomy.heads import (
    DropoutResult,
    full_size,
    fused_vs_separate,
    in_proj_blocks,
    multi_head_with_torch,
    parse_dropout_p,
    resplit,
)
from attnlab.figures import dim_labels, matrices_figure, matrix_figure, with_head_strip
from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32
from attnlab.params import Invalid, divisors
from attnlab.pipeline import LabResult
from attnlab.tolerance import size
from attnlab.ui.app import fold
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, code_line, number, selectbox, shape_text, stage, text_input
from attnlab.ui.pages.multihead import grouped
from attnlab.ui.parts import lab
from attnlab.ui.parts.checks import check_table, head_name

PAGE = PageState("mh", links.params("mh"))


def dropout_p(say: bool = True) -> float:
    """Dropout p from its text box: 0 (off) when it cannot be used, with a message naming what was typed if `say`."""
    raw = PAGE["p"]
    try:
        return parse_dropout_p(raw)
    except Invalid as bad:
        if say:
            st.error(t(f"multihead.{bad.reason}", raw=code(raw, 20)), icon=":material/block:")
        return bad.used


def cut(result: LabResult) -> None:
    """1. W_Q, under a strip that colours its columns by the head that owns them."""
    steps, d_model = result.steps, result.weights.d_model
    n_heads, d_k, dims = steps.n_heads, steps.d_k, dim_labels(d_model)
    stage(
        1,
        t("multihead.cut_title"),
        rf"d_{{model}} = H \times d_k = {n_heads} \times {d_k} = {d_model}",
        shape_text("W_Q", ["d_model", "d_model"], [d_model, d_model]),
        t("multihead.cut_note", d_k=d_k),
    )
    breaks = list(range(d_k, d_model, d_k))
    fig = matrix_figure(
        result.weights.w_q.numpy(), dims, dims, row_name="d_model", col_name=t("stages.dim"), col_breaks=breaks
    )
    chart(with_head_strip(fig, n_heads, [head_name(h) for h in range(n_heads)]), "mh.wq")


def reshape(result: LabResult, shown: tuple[int, ...]) -> None:
    """2. The reshape (T, d_model) -> (H, T, d_k), and the shown heads' slices."""
    steps, tokens = result.steps, result.tokens
    n_heads, d_k, d_model, t_len = steps.n_heads, steps.d_k, result.weights.d_model, len(tokens)
    stage(
        2,
        t("multihead.reshape_title"),
        rf"Q \in \mathbb{{R}}^{{{t_len}\times{d_model}}}"
        rf"\;\xrightarrow{{\text{{view}}}}\;\mathbb{{R}}^{{{t_len}\times{n_heads}\times{d_k}}}"
        rf"\;\xrightarrow{{\text{{transpose}}}}\;\mathbb{{R}}^{{{n_heads}\times{t_len}\times{d_k}}}",
        shape_text("Q_h", ["H", "T", "d_k"], [n_heads, t_len, d_k]),
        t("multihead.reshape_note"),
    )
    code_line("q = (x @ W_Q).view(T, H, d_k).transpose(0, 1)  # (H, T, d_k)")
    axes = dict(row_name=t("stages.token"), col_name=t("stages.dim"))
    breaks = list(range(d_k, d_model, d_k))
    chart(matrix_figure(steps.q.numpy(), tokens, dim_labels(d_model), col_breaks=breaks, **axes), "mh.q")
    per_head = [steps.heads.q[h].numpy() for h in shown]
    chart(matrices_figure(per_head, [head_name(h) for h in shown], tokens, dim_labels(d_k), **axes), "mh.qh")


def every_head(result: LabResult, shown: tuple[int, ...]) -> None:
    """3. The shown heads' attention weights, side by side or one enlarged."""
    steps, tokens = result.steps, result.tokens
    stage(
        3,
        t("multihead.heads_title"),
        r"A_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}} + M\right)",
        shape_text("A", ["H", "T", "T"], [steps.n_heads, len(tokens), len(tokens)]),
        t("multihead.heads_note"),
    )
    mats = [steps.heads.weights[h].numpy() for h in shown]
    titles = [head_name(h) for h in shown]
    square = dict(row_name=t("stages.query"), col_name=t("stages.key"), kind="prob")
    one = dict(title=titles[0]) if len(shown) == 1 else {}
    chart(matrices_figure(mats, titles, tokens, tokens, **square, **one), "mh.weights")


def resplit_section(result: LabResult) -> None:
    """4. The same W cut into another number of heads: other patterns from the same numbers."""
    steps, tokens, d_model = result.steps, result.tokens, result.weights.d_model
    stage(
        4,
        t("multihead.resplit_title"),
        r"W_Q[:,\, h d_k : (h+1) d_k]",
        shape_text("d_k", ["d_model / H"], [steps.d_k]),
        t("multihead.resplit_note"),
    )
    others = divisors(d_model)
    labels = {h: t("multihead.cmp_option", h=h, d_k=d_model // h) for h in others}
    selectbox(PAGE, "cmp", t("multihead.cmp"), options=others, labels=labels)
    cmp = PAGE["cmp"]
    maps = resplit(result.x, result.weights, [cmp], is_causal=lab.LAB["causal"])
    square = dict(row_name=t("stages.query"), col_name=t("stages.key"), kind="prob")
    left, right = st.columns(2)
    with left:
        st.caption(t("multihead.cmp_current", h=steps.n_heads, d_k=steps.d_k))
        chart(matrix_figure(steps.heads.weights[0].numpy(), tokens, tokens, **square), "mh.cur0")
    with right:
        st.caption(t("multihead.cmp_other", h=cmp, d_k=d_model // cmp))
        chart(matrix_figure(maps[cmp][0].numpy(), tokens, tokens, **square), "mh.cmp0")
    diff = float((maps[cmp][0] - steps.heads.weights[0]).abs().max())
    st.caption(t("multihead.cmp_diff", diff=f"{diff:.3f}"))


def concat_section(result: LabResult) -> None:
    """5. Concatenate the heads and apply W_O."""
    steps, tokens, weights = result.steps, result.tokens, result.weights
    d_model, d_k = weights.d_model, steps.d_k
    stage(
        5,
        t("multihead.concat_title"),
        r"\mathrm{Output} = [Z_1 \,|\, \dots \,|\, Z_H]\; W_O",
        shape_text("Output", ["T", "d_model"], [len(tokens), d_model]),
        t("multihead.concat_note"),
    )
    dims, breaks, dim = dim_labels(d_model), list(range(d_k, d_model, d_k)), t("stages.dim")
    axes = dict(row_name=t("stages.token"), col_name=dim)
    chart(matrix_figure(steps.concat.numpy(), tokens, dims, title="Concat", col_breaks=breaks, **axes), "mh.concat")
    w_o = matrix_figure(
        weights.w_o.numpy(), dims, dims, title="W_O", row_name="d_model", col_name=dim, row_breaks=breaks
    )
    chart(w_o, "mh.wo")
    chart(matrix_figure(steps.output.numpy(), tokens, dims, title="Output", **axes), "mh.out")


def fused_section(result: LabResult) -> None:
    """6. Fused QKV: one matmul, then chunk, equal to three separate ones."""
    d_model = result.weights.d_model
    stage(
        6,
        t("multihead.fused_title"),
        r"[Q\,|\,K\,|\,V] = X\,[W_Q\,|\,W_K\,|\,W_V]",
        shape_text("W_QKV", ["d_model", "3·d_model"], [d_model, 3 * d_model]),
        t("multihead.fused_note"),
    )
    st.code("q, k, v = (x @ W_qkv).chunk(3, dim=-1)  # W_qkv: (d_model, 3*d_model)", language="python")
    fused_cols = [f"{m}{i}" for m in ("q", "k", "v") for i in range(d_model)]
    dims = dim_labels(d_model)
    fused = result.weights.fused_qkv().numpy()
    breaks = [d_model, 2 * d_model]
    chart(
        matrix_figure(fused, dims, fused_cols, title="W_QKV", col_name=t("stages.dim"), col_breaks=breaks), "mh.fused"
    )
    f64, f32 = fused_vs_separate(result.x, result.weights), fused_vs_separate(result.x.float(), result.weights)
    rows = [(f"{m.upper()} (float64)", t("multihead.separate"), f64.diffs[m]) for m in "qkv"]
    rows += [(f"{m.upper()} (float32)", t("multihead.separate"), f32.diffs[m]) for m in "qkv"]
    steps = result.steps
    check_table(rows, max(size(steps.q), size(steps.k), size(steps.v)), (TOL_FLOAT32, RTOL_FLOAT32))
    st.caption(t("multihead.fused_caption"))


def dropout_run(result: LabResult, p: float) -> DropoutResult:
    """The page's multi-head attention through nn.MultiheadAttention, with dropout p from the page's seed."""
    steps = result.steps
    return multi_head_with_torch(
        result.x, result.weights, steps.n_heads, is_causal=lab.LAB["causal"], dropout_p=p, seed=PAGE["dseed"]
    )


def dropout_section(result: LabResult, shown: tuple[int, ...]) -> DropoutResult:
    """7. Dropout on the attention weights, drawn from a seed so PyTorch can draw the same mask."""
    steps, tokens = result.steps, result.tokens
    n_heads, t_len = steps.n_heads, len(tokens)
    stage(
        7,
        t("multihead.dropout_title"),
        r"\tilde A = \frac{A \odot m}{1-p},\quad m_{ij} \sim \mathrm{Bernoulli}(1-p)",
        shape_text("A", ["H", "T", "T"], [n_heads, t_len, t_len]),
        t("multihead.dropout_note"),
    )
    left, right = st.columns(2)
    text_input(PAGE, "p", t("multihead.p"), where=left, help=t("multihead.p_help"))
    number(PAGE, "dseed", t("multihead.dseed"), where=right, help=t("multihead.dseed_help"))
    p = dropout_p()
    run = dropout_run(result, p)
    if not p:
        st.caption(t("multihead.dropout_off"))
        return run
    stats = t(
        "multihead.dropout_stats", zeroed=run.zeroed, total=n_heads * t_len * t_len, scale=f"{run.kept_scale:.4g}"
    )
    st.info(stats, icon=":material/grain:")
    mats = [run.steps.heads.dropped[h].numpy() for h in shown]
    axes = dict(row_name=t("stages.query"), col_name=t("stages.key"), kind="positive")
    chart(matrices_figure(mats, [head_name(h) for h in shown], tokens, tokens, **axes), "mh.dropped")
    return run


def torch_section(run: DropoutResult) -> None:
    """8. The same numbers from nn.MultiheadAttention, and how it packs the weights."""
    d_model, n_heads = run.weights.d_model, run.n_heads
    stage(
        8,
        t("multihead.torch_title"),
        r"\texttt{in\_proj\_weight} = \begin{bmatrix} W_Q^\top \\ W_K^\top \\ W_V^\top \end{bmatrix}",
        shape_text("in_proj_weight", ["3·d_model", "d_model"], [3 * d_model, d_model]),
        t("multihead.torch_note"),
    )
    st.code(
        "mha = nn.MultiheadAttention(d_model, H, bias=False, batch_first=True, dropout=p)\n"
        "mha.in_proj_weight.copy_(torch.cat([W_Q, W_K, W_V], dim=1).T)  # (3*d_model, d_model)\n"
        "mha.out_proj.weight.copy_(W_O.T)\n"
        "torch.manual_seed(seed)\n"
        "out, per_head = mha(x, x, x, attn_mask=causal, average_attn_weights=False)",
        language="python",
    )
    packing = in_proj_blocks(run.weights, n_heads)
    label = t("multihead.with_dropout", p=run.p) if run.p else t("multihead.no_dropout")
    check_table(
        [
            (t("multihead.row_output", label=label), "nn.MultiheadAttention", run.check.output),
            (t("multihead.row_weights", label=label), "average_attn_weights=False", run.check.weights),
            (t("multihead.row_sdpa", label=label), "F.scaled_dot_product_attention", run.check.sdpa),
        ]
        + [(f"in_proj_weight[{m.upper()}]", f"W_{m.upper()}ᵀ", packing[m]) for m in "qkv"]
        + [("out_proj.weight", "W_Oᵀ", packing["o"])],
        max(size(run.steps.output), size(run.weights.w_o), 1.0),  # weights: at most 1
    )
    packed = run.weights.fused_qkv().T.numpy()
    in_rows = [f"{m}{i}" for m in ("q", "k", "v") for i in range(d_model)]
    fig = matrix_figure(
        packed,
        in_rows,
        dim_labels(d_model),
        title="in_proj_weight",
        col_name=t("stages.dim"),
        row_breaks=[d_model, 2 * d_model],
    )
    chart(fig, "mh.inproj")


def full_size_section(t_len: int) -> None:
    """9. The same cut at a real model's size: shapes from a reshape of meta tensors (no memory)."""
    stage(
        9,
        t("multihead.full_title"),
        r"(T,\ d_{model}) \to (H,\ T,\ d_k),\qquad d_k = d_{model} / H",
        t("multihead.full_shape_note"),
        t("multihead.full_note"),
    )
    left, right = st.columns(2)
    number(PAGE, "full_d", "d_model", where=left, on_change=PAGE.fit_heads, args=("full_d", "full_h"))
    selectbox(PAGE, "full_h", t("common.heads"), where=right, options=divisors(PAGE["full_d"]))
    size = full_size(PAGE["full_d"], PAGE["full_h"], t_len)
    st.code(
        f"q = x @ W_Q                                     # {size.q_shape}  (T, d_model)\n"
        f"q = q.view(T, H, d_k).transpose(0, 1)           # {size.split_shape}  (H, T, d_k), d_k = {size.d_k}\n"
        f"scores = q @ k.transpose(-2, -1)                # {size.scores_shape}  (H, T, T)\n"
        f"concat = z.transpose(0, 1).reshape(T, d_model)  # {size.concat_shape}  (T, d_model)\n"
        f"# W_Q, W_K, W_V, W_O: 4 x {size.d_model}^2 = {size.projection_params:,} weights",
        language="python",
    )


def later_sections(result: LabResult, shown: tuple[int, ...]) -> None:
    """Sections 4 to 10, each folded under its title until opened (`fold.section`, kept in the link's `open`): sent
    with the first three, their 10 charts, tables and code boxes took a phone's browser longer than the rest of the
    page (issue 61; at 64 tokens x d_model 64 a desktop's settled in 8.7 s without them instead of 12.6)."""
    st.caption(t("multihead.folded"))
    with fold.section(PAGE, "resplit", f"4. {t('multihead.resplit_title')}") as drawn:
        if drawn:
            resplit_section(result)
    with fold.section(PAGE, "concat", f"5. {t('multihead.concat_title')}") as drawn:
        if drawn:
            concat_section(result)
    with fold.section(PAGE, "fused", f"6. {t('multihead.fused_title')}") as drawn:
        if drawn:
            fused_section(result)
    run = None
    with fold.section(PAGE, "dropout", f"7. {t('multihead.dropout_title')}") as drawn:
        if drawn:
            run = dropout_section(result, shown)
    with fold.section(PAGE, "torch", f"8. {t('multihead.torch_title')}") as drawn:
        if drawn:
            torch_section(run or dropout_run(result, dropout_p(say=False)))  # section 7 says why p is off
    with fold.section(PAGE, "full", f"9. {t('multihead.full_title')}") as drawn:
        if drawn:
            full_size_section(len(result.tokens))
    with fold.section(PAGE, "gqa", f"{grouped.INDEX}. {t('gqa.title')}") as drawn:
        if drawn:
            grouped.grouped_section(result, PAGE)


def load() -> None:
    """The Playground's state and this page's own, with head counts that divide what they must."""
    lab.load()
    first = PAGE.load()
    PAGE.heads_must_divide("d_model", "cmp", first, d_state=lab.LAB)
    PAGE.heads_must_divide("full_d", "full_h", first)
    PAGE.heads_must_divide("d_model", "gqa_h", first, d_state=lab.LAB)
    PAGE.heads_must_divide("gqa_h", "gqa_kv", first)
    lab.LAB.show_problems()
    PAGE.show_problems()
