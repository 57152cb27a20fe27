"""The Cross-attention page's sections: its URL state, the two texts, the masks, the bottleneck, the check."""

import math

import numpy as np
import streamlit as st

from attnlab import links
from attnlab.anatomy.cross import CrossConfig, CrossResult, check_cross
from attnlab.figures import dim_labels, matrices_figure, matrix_figure
from attnlab.limits import MAX_TOKENS
from attnlab.tokens import tokenize
from attnlab.tolerance import size
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import markdown_table, md_escape
from attnlab.ui.app.widgets import chart, multiselect, shape_text, size_inputs, stage, text_input, toggle
from attnlab.ui.parts.checks import check_table, head_name

DEFAULT = CrossConfig()


PAGE = PageState("cross", links.params("cross"))


def controls() -> None:
    """Both texts, sizes, seed, the decoder's mask and which source tokens are padding."""
    left, right = st.columns(2)
    text_input(PAGE, "src", t("cross.source"), where=left, help=t("cross.source_help", cap=MAX_TOKENS))
    text_input(PAGE, "tgt", t("cross.target"), where=right, help=t("cross.target_help", cap=MAX_TOKENS))
    cols = st.columns([2, 2, 2, 3], vertical_alignment="bottom")
    size_inputs(PAGE, cols)
    toggle(PAGE, "causal", t("cross.causal"), where=cols[3], help=t("cross.causal_help"))
    source = tokenize(PAGE["src"])[:MAX_TOKENS]
    past_end = [j for j in PAGE["pad"] if j >= len(source)]
    if past_end:
        PAGE["pad"] = [j for j in PAGE["pad"] if j < len(source)]
    multiselect(
        PAGE,
        "pad",
        t("cross.pad"),
        options=list(range(len(source))),
        labels={j: f"{j} · {tok}" for j, tok in enumerate(source)},
        help=t("cross.pad_help"),
        placeholder=t("cross.pad_none"),
    )
    if past_end:
        st.caption(t("cross.pad_past_end", items=", ".join(map(str, past_end)), n=len(source)))


def config() -> CrossConfig:
    """The current settings as the core's config."""
    v = PAGE.values()
    return CrossConfig(v["src"], v["tgt"], v["causal"], tuple(v["pad"]), v["d_model"], v["heads"], v["seed"])


def text_status(cfg: CrossConfig) -> bool:
    """Say when a text is empty; False when there is nothing to compute."""
    empty = [name for name, raw in (("source", cfg.source), ("target", cfg.target)) if not tokenize(raw)]
    for name in empty:
        st.info(t(f"cross.empty_{name}"), icon=":material/edit:")
    return not empty


def cut_and_hidden(result: CrossResult) -> None:
    """Texts cut at the token cap, a padding mask that hides everything, and the sizes in one line."""
    for name, typed in (("source", result.n_source_typed), ("target", result.n_target_typed)):
        if typed > MAX_TOKENS:
            st.warning(t(f"cross.too_many_{name}", n=typed, cap=MAX_TOKENS), icon=":material/content_cut:")
    if result.all_hidden:
        st.warning(t("cross.all_hidden"), icon=":material/visibility_off:")
    t_src, hidden = len(result.source), int((~result.keep).sum())
    summary = dict(
        t_src=t_src, t_tgt=len(result.target), hidden=hidden, d_k=result.cross.d_k, heads=result.cross.n_heads
    )
    st.caption(t("cross.summary", **summary))


def decoder_section(result: CrossResult, shown: tuple[int, ...]) -> None:
    """1. The decoder's own (masked) self-attention, whose output feeds the queries."""
    tgt, causal, n_heads = result.target, result.config.causal, result.config.heads
    stage(
        1,
        t("cross.decoder_title"),
        r"A^{dec}_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}} + M_{causal}\right),"
        r"\quad H_{tgt} = X_{tgt} + \mathrm{MHA}(X_{tgt})",
        shape_text("A_dec", ["H", "T_tgt", "T_tgt"], [n_heads, len(tgt), len(tgt)]),
        t("cross.decoder_note_causal") if causal else t("cross.decoder_note_open"),
    )
    heads, titles = result.decoder.heads, [head_name(h) for h in shown]
    square = dict(row_name=t("cross.target_token"), col_name=t("cross.target_token"))
    masked = [heads.masked[h].numpy() for h in shown]
    chart(matrices_figure(masked, titles, tgt, tgt, blocked_text=t("cross.blocked"), **square), "cr.dec_masked")
    weights = [heads.weights[h].numpy() for h in shown]
    chart(matrices_figure(weights, titles, tgt, tgt, kind="prob", **square), "cr.dec_weights")


def cross_section(result: CrossResult, shown: tuple[int, ...]) -> None:
    """2-3. Target rows against source columns: scores with the padding mask, weights and the output."""
    src, tgt, n_heads = result.source, result.target, result.config.heads
    rect = dict(row_name=t("cross.target_token"), col_name=t("cross.source_token"))
    heads, titles = result.cross.heads, [head_name(h) for h in shown]
    stage(
        2,
        t("cross.scores_title"),
        r"S_h = \frac{(H_{tgt} W_Q)_h\,(X_{src} W_K)_h^\top}{\sqrt{d_k}} + M_{pad}",
        shape_text("S", ["H", "T_tgt", "T_src"], [n_heads, len(tgt), len(src)]),
        t("cross.scores_note"),
    )
    masked = [heads.masked[h].numpy() for h in shown]
    chart(matrices_figure(masked, titles, tgt, src, blocked_text=t("cross.padding"), **rect), "cr.masked")
    stage(
        3,
        t("cross.weights_title"),
        r"A_h = \mathrm{softmax}(S_h),\qquad Z_h = A_h\,(X_{src} W_V)_h",
        shape_text("A", ["H", "T_tgt", "T_src"], [n_heads, len(tgt), len(src)]),
        t("cross.weights_note"),
    )
    weights = [heads.weights[h].numpy() for h in shown]
    chart(matrices_figure(weights, titles, tgt, src, kind="prob", **rect), "cr.weights")
    if result.all_hidden:
        st.warning(t("cross.rows_see_nothing", n=len(tgt)), icon=":material/block:")
    dims = dim_labels(result.config.d_model)
    axes = dict(row_name=t("cross.target_token"), col_name=t("cross.dim"))
    chart(matrix_figure(result.cross.output.numpy(), tgt, dims, title=t("cross.output"), **axes), "cr.output")


def bottleneck_section(result: CrossResult) -> None:
    """4. One fixed context c for the whole source, against one context c_i per target token."""
    tgt, d_model = result.target, result.config.d_model
    stage(
        4,
        t("cross.bottleneck_title"),
        r"c = \frac{1}{|S|}\sum_{j \in S} h_j \quad\text{vs}\quad c_i = \sum_j \bar a_{ij}\, h_j",
        shape_text("c_i", ["T_tgt", "d_model"], [len(tgt), d_model]),
        t("cross.bottleneck_note"),
    )
    b = result.bottleneck
    if b is None:
        st.info(t("cross.bottleneck_none"), icon=":material/visibility_off:")
    else:
        rows = [t("cross.c_fixed")] + [f"c · {tok}" for tok in tgt]
        stacked = np.vstack([b.c.numpy()[None], b.contexts.numpy()])
        axes = dict(row_name=t("cross.context"), col_name=t("cross.dim"))
        chart(matrix_figure(stacked, rows, dim_labels(d_model), **axes), "cr.contexts")
        header = (t("cross.target_token"), "|c_i − c|", "cos(c_i, c)")
        distances = zip(tgt, b.distance.tolist(), b.cosine.tolist(), strict=True)
        st.markdown(markdown_table(header, [(tok, f"{d:.3f}", f"{c:.3f}") for tok, d, c in distances]))  # no data grid
        far = md_escape(tgt[int(b.distance.argmax())])
        st.caption(
            t("cross.bottleneck_stats", spread=f"{b.spread:.3f}", far=far, dist=f"{float(b.distance.max()):.3f}")
        )
    st.markdown(t("cross.why"))


def check_section(result: CrossResult) -> None:
    """5. Both attentions against PyTorch, with the weights the result was computed from."""
    stage(
        5,
        t("cross.check_title"),
        r"\texttt{mha(query=}H_{tgt}\texttt{,} \allowbreak \texttt{key=}X_{src}\texttt{,} \allowbreak "
        r"\texttt{value=}X_{src}\texttt{,} \allowbreak \texttt{key\_padding\_mask)}",
        "",
        t("cross.check_note"),
    )
    check = check_cross(result)
    check_table(
        [
            (t("cross.check_cross"), "F.scaled_dot_product_attention", check.sdpa),
            (t("cross.check_cross"), "nn.MultiheadAttention", check.mha),
            (t("cross.check_decoder"), "nn.MultiheadAttention", check.decoder),
        ],
        max(size(result.cross.output), size(result.decoder.output)),
    )
    if math.isnan(check.mha):
        st.info(t("cross.mha_nan"), icon=":material/info:")
