"""Multi-head: how d_model is cut into heads, the same W re-split, fused QKV, dropout, and PyTorch's packing."""

import numpy as np
import streamlit as st

from attnlab.anatomy import full_size, fused_vs_separate, in_proj_blocks, multi_head_with_torch, resplit
from attnlab.figures import dim_labels, grid_figure, head_columns_figure, matrix_figure
from attnlab.limits import TOL_FLOAT32
from attnlab.params import Param, divisors, int_in, text
from attnlab.ui import lab, stages, state
from attnlab.ui.anatomy import adopt_lab_state, block_lines, check_table, head_name, save_with_lab
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape, shape_text, stage

SCOPE = "mh"
PARAMS = (
    Param("p", "0", text(20)),
    Param("dseed", 0, int_in(0, lab.MAX_SEED, 0)),
    Param("cmp", 1, int_in(1, lab.MAX_D_MODEL, 1)),
    Param("full_d", 512, int_in(1, 16384, 512)),
    Param("full_h", 8, int_in(1, 16384, 8)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


def parse_p(raw: str) -> float | None:
    """Dropout p from the text box, or None (with a message naming what was typed) if unusable."""
    try:
        p = float(str(raw).strip())
    except ValueError:
        st.error(t("multihead.p_not_number", raw=md_escape(str(raw)[:20])), icon=":material/block:")
        return None
    if not (np.isfinite(p) and 0.0 <= p < 1.0):
        st.error(t("multihead.p_out_of_range", raw=md_escape(str(raw)[:20])), icon=":material/block:")
        return None
    return p


st.title(t("multihead.title"))
st.caption(t("multihead.intro"))
lab.load()
adopt_lab_state()
first = not st.session_state.get(f"_loaded.{SCOPE}")
state.load(SCOPE, PARAMS)
state.heads_must_divide(SCOPE, lab.K["d_model"], K["cmp"], "cmp", first)
state.heads_must_divide(SCOPE, K["full_d"], K["full_h"], "full_h", first)
state.show_problems(lab.SCOPE)
state.show_problems(SCOPE)
lab.controls()
d_model, n_heads = st.session_state[lab.K["d_model"]], st.session_state[lab.K["heads"]]
state.fit_heads(lab.K["d_model"], K["cmp"])
result = lab.compute()
save_with_lab(SCOPE, PARAMS)

if lab.text_status(result):
    steps, tokens, weights = result.steps, result.tokens, result.weights
    d_k, t_len, causal = steps.d_k, len(tokens), st.session_state[lab.K["causal"]]
    tok, dim, query, key_name = t("stages.token"), t("stages.dim"), t("stages.query"), t("stages.key")
    names = [head_name(h) for h in range(n_heads)]
    dims = dim_labels(d_model)

    # 1. W_Q's columns, coloured by the head that owns them
    stage(
        1,
        t("multihead.cut_title"),
        rf"d_{{model}} = H \times d_k = {n_heads} \times {d_k} = {d_model}",
        shape_text("W_Q", ["d_model", "d_model"], [d_model, d_model]),
        t("multihead.cut_note", d_k=d_k),
    )
    chart(head_columns_figure(d_model, n_heads, names), "mh.owner")
    fig = matrix_figure(weights.w_q.numpy(), dims, dims, row_name="d_model", col_name=dim)
    chart(block_lines(fig, d_k, n_heads), "mh.wq")

    # 2. The reshape (T, d_model) -> (H, T, d_k)
    stage(
        2,
        t("multihead.reshape_title"),
        rf"Q \in \mathbb{{R}}^{{{t_len}\times{d_model}}}"
        rf"\;\xrightarrow{{\text{{view}}}}\;\mathbb{{R}}^{{{t_len}\times{n_heads}\times{d_k}}}"
        rf"\;\xrightarrow{{\text{{transpose}}}}\;\mathbb{{R}}^{{{n_heads}\times{t_len}\times{d_k}}}",
        shape_text("Q_h", ["H", "T", "d_k"], [n_heads, t_len, d_k]),
        t("multihead.reshape_note"),
    )
    st.code("q = (x @ W_Q).view(T, H, d_k).transpose(0, 1)  # (H, T, d_k)", language="python")
    fig = matrix_figure(steps.q.numpy(), tokens, dims, row_name=tok, col_name=dim)
    chart(block_lines(fig, d_k, n_heads), "mh.q")
    per_head = [steps.heads.q[h].numpy() for h in range(n_heads)]
    if n_heads == 1:
        chart(matrix_figure(per_head[0], tokens, dims, row_name=tok, col_name=dim), "mh.qh")
    else:
        chart(grid_figure(per_head, names, tokens, dim_labels(d_k), row_name=tok, col_name=dim), "mh.qh")

    # 3. Every head's attention weights, side by side or one enlarged
    stage(
        3,
        t("multihead.heads_title"),
        r"A_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}} + M\right)",
        shape_text("A", ["H", "T", "T"], [n_heads, t_len, t_len]),
        t("multihead.heads_note"),
    )
    view = stages.head_picker(n_heads, lab.K["head"])
    square = dict(row_name=query, col_name=key_name, kind="prob")
    if view == 0 and n_heads > 1:
        mats = [steps.heads.weights[h].numpy() for h in range(n_heads)]
        chart(grid_figure(mats, names, tokens, tokens, **square), "mh.weights")
    else:
        h = max(view, 1) - 1
        chart(matrix_figure(steps.heads.weights[h].numpy(), tokens, tokens, title=names[h], **square), "mh.weights")

    # 4. The same W cut into a different number of heads
    stage(
        4,
        t("multihead.resplit_title"),
        r"W_Q[:,\, h d_k : (h+1) d_k]",
        shape_text("d_k", ["d_model / H"], [d_k]),
        t("multihead.resplit_note"),
    )
    others = divisors(d_model)
    st.selectbox(
        t("multihead.cmp"),
        others,
        key=K["cmp"],
        format_func={h: t("multihead.cmp_option", h=h, d_k=d_model // h) for h in others}.get,
        persist_state="session",
    )
    cmp = st.session_state[K["cmp"]]
    maps = resplit(result.x, weights, [cmp], is_causal=causal)
    left, right = st.columns(2)
    with left:
        st.caption(t("multihead.cmp_current", h=n_heads, d_k=d_k))
        chart(matrix_figure(steps.heads.weights[0].numpy(), tokens, tokens, **square), "mh.cur0")
    with right:
        st.caption(t("multihead.cmp_other", h=cmp, d_k=d_model // cmp))
        chart(matrix_figure(maps[cmp][0].numpy(), tokens, tokens, **square), "mh.cmp0")
    diff = float((maps[cmp][0] - steps.heads.weights[0]).abs().max())
    st.caption(t("multihead.cmp_diff", diff=f"{diff:.3f}"))

    # 5. Concatenate the heads and apply W_O
    stage(
        5,
        t("multihead.concat_title"),
        r"\mathrm{Output} = [Z_1 \,|\, \dots \,|\, Z_H]\; W_O",
        shape_text("Output", ["T", "d_model"], [t_len, d_model]),
        t("multihead.concat_note"),
    )
    fig = matrix_figure(steps.concat.numpy(), tokens, dims, title="Concat", row_name=tok, col_name=dim)
    chart(block_lines(fig, d_k, n_heads), "mh.concat")
    fig = matrix_figure(weights.w_o.numpy(), dims, dims, title="W_O", row_name="d_model", col_name=dim)
    chart(block_lines(fig, d_k, n_heads, axis="y"), "mh.wo")
    chart(matrix_figure(steps.output.numpy(), tokens, dims, title="Output", row_name=tok, col_name=dim), "mh.out")

    # 6. Fused QKV: one matmul, then chunk
    stage(
        6,
        t("multihead.fused_title"),
        r"[Q\,|\,K\,|\,V] = X\,[W_Q\,|\,W_K\,|\,W_V]",
        shape_text("W_QKV", ["d_model", "3·d_model"], [d_model, 3 * d_model]),
        t("multihead.fused_note"),
    )
    st.code("q, k, v = (x @ W_qkv).chunk(3, dim=-1)  # W_qkv: (d_model, 3*d_model)", language="python")
    fused_cols = [f"{m}{i}" for m in ("q", "k", "v") for i in range(d_model)]
    fig = matrix_figure(weights.fused_qkv().numpy(), dims, fused_cols, title="W_QKV", col_name=dim)
    chart(block_lines(fig, d_model, 3), "mh.fused")
    f64 = fused_vs_separate(result.x, weights)
    f32 = fused_vs_separate(result.x.float(), weights)
    rows = [(f"{m.upper()} (float64)", t("multihead.separate"), f64.diffs[m]) for m in "qkv"]
    rows += [(f"{m.upper()} (float32)", t("multihead.separate"), f32.diffs[m]) for m in "qkv"]
    check_table(rows, tol=TOL_FLOAT32)
    st.caption(t("multihead.fused_caption"))

    # 7. Dropout on the attention weights
    stage(
        7,
        t("multihead.dropout_title"),
        r"\tilde A = \frac{A \odot m}{1-p},\quad m_{ij} \sim \mathrm{Bernoulli}(1-p)",
        shape_text("A", ["H", "T", "T"], [n_heads, t_len, t_len]),
        t("multihead.dropout_note"),
    )
    left, right = st.columns(2)
    left.text_input(t("multihead.p"), key=K["p"], help=t("multihead.p_help"), persist_state="session")
    right.number_input(
        t("multihead.dseed"),
        min_value=0,
        max_value=lab.MAX_SEED,
        step=1,
        key=K["dseed"],
        help=t("multihead.dseed_help"),
        persist_state="session",
    )
    p = parse_p(st.session_state[K["p"]])
    run = multi_head_with_torch(
        result.x, weights, n_heads, is_causal=causal, dropout_p=p or 0.0, seed=st.session_state[K["dseed"]]
    )
    if p:
        st.info(
            t(
                "multihead.dropout_stats",
                zeroed=run.zeroed,
                total=n_heads * t_len * t_len,
                scale=f"{run.kept_scale:.4g}",
            ),
            icon=":material/grain:",
        )
        mats = [run.steps.heads.dropped[h].numpy() for h in range(n_heads)]
        dropped_kw = dict(row_name=query, col_name=key_name, kind="positive")
        if n_heads == 1:
            chart(matrix_figure(mats[0], tokens, tokens, **dropped_kw), "mh.dropped")
        else:
            chart(grid_figure(mats, names, tokens, tokens, **dropped_kw), "mh.dropped")
    else:
        st.caption(t("multihead.dropout_off"))

    # 8. Against nn.MultiheadAttention, and how it packs the weights
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
    packing = in_proj_blocks(weights, n_heads)
    label = t("multihead.with_dropout", p=p) if p else t("multihead.no_dropout")
    check_table(
        [
            (t("multihead.row_output", label=label), "nn.MultiheadAttention", run.check.output),
            (t("multihead.row_weights", label=label), "average_attn_weights=False", run.check.weights),
            (t("multihead.row_sdpa", label=label), "F.scaled_dot_product_attention", run.check.sdpa),
        ]
        + [(f"in_proj_weight[{m.upper()}]", f"W_{m.upper()}ᵀ", packing[m]) for m in "qkv"]
        + [("out_proj.weight", "W_Oᵀ", packing["o"])]
    )
    packed = weights.fused_qkv().T.numpy()
    in_rows = [f"{m}{i}" for m in ("q", "k", "v") for i in range(d_model)]
    fig = matrix_figure(packed, in_rows, dims, title="in_proj_weight", col_name=dim)
    chart(block_lines(fig, d_model, 3, axis="y"), "mh.inproj")

    # 9. The same cut at a real model's size: d_model 512 into 8 heads of 64
    stage(
        9,
        t("multihead.full_title"),
        r"(T,\ d_{model}) 	o (H,\ T,\ d_k),\qquad d_k = d_{model} / H",
        t("multihead.full_shape_note"),
        t("multihead.full_note"),
    )
    left, right = st.columns(2)
    left.number_input(
        "d_model",
        min_value=1,
        max_value=16384,
        step=1,
        key=K["full_d"],
        on_change=state.fit_heads,
        args=(K["full_d"], K["full_h"]),
        persist_state="session",
    )
    right.selectbox(
        t("common.heads"), divisors(st.session_state[K["full_d"]]), key=K["full_h"], persist_state="session"
    )
    size = full_size(st.session_state[K["full_d"]], st.session_state[K["full_h"]], t_len)
    st.code(
        f"q = x @ W_Q                                     # {size.q_shape}  (T, d_model)\n"
        f"q = q.view(T, H, d_k).transpose(0, 1)           # {size.split_shape}  (H, T, d_k), d_k = {size.d_k}\n"
        f"scores = q @ k.transpose(-2, -1)                # {size.scores_shape}  (H, T, T)\n"
        f"concat = z.transpose(0, 1).reshape(T, d_model)  # {size.concat_shape}  (T, d_model)\n"
        f"# W_Q, W_K, W_V, W_O: 4 x {size.d_model}^2 = {size.projection_params:,} weights",
        language="python",
    )
