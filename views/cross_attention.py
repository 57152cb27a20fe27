"""Cross-attention: target queries attend to source keys and values, with padding and a causal decoder."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from attnlab.anatomy import CrossConfig, check_cross, run_cross
from attnlab.figures import dim_labels, grid_figure, matrix_figure
from attnlab.limits import MAX_D_MODEL, MAX_SEED, MAX_TEXT_CHARS, MAX_TOKENS
from attnlab.params import Invalid, Param, boolean, dump_bool, int_in, text
from attnlab.tokens import tokenize
from attnlab.ui import state
from attnlab.ui.anatomy import check_table, head_name
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape, shape_text, size_inputs, stage

SCOPE = "cross"
DEFAULT = CrossConfig()


def parse_pad(raw: str) -> list[int]:
    """Padded source positions from the URL: comma-separated whole numbers below the token cap."""
    try:
        items = [int(s) for s in str(raw).replace(" ", "").split(",") if s]
    except ValueError:
        items = None
    if items is None or any(not 0 <= j < MAX_TOKENS for j in items):
        raise Invalid("not_choice", list(DEFAULT.pad), options=t("cross.pad_options", cap=MAX_TOKENS - 1))
    return sorted(set(items))


PARAMS = (
    Param("src", DEFAULT.source, text(MAX_TEXT_CHARS)),
    Param("tgt", DEFAULT.target, text(MAX_TEXT_CHARS)),
    Param("causal", DEFAULT.causal, boolean(DEFAULT.causal), dump_bool),
    Param("pad", list(DEFAULT.pad), parse_pad, lambda pad: ",".join(str(j) for j in pad)),
    Param("d_model", DEFAULT.d_model, int_in(2, MAX_D_MODEL, DEFAULT.d_model)),
    Param("heads", DEFAULT.heads, int_in(1, MAX_D_MODEL, DEFAULT.heads)),
    Param("seed", DEFAULT.seed, int_in(0, MAX_SEED, DEFAULT.seed)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


st.title(t("cross.title"))
st.caption(t("cross.intro"))
first = not st.session_state.get(f"_loaded.{SCOPE}")
state.load(SCOPE, PARAMS)
state.heads_must_divide(SCOPE, K["d_model"], K["heads"], "heads", first)
state.show_problems(SCOPE)

left, right = st.columns(2)
left.text_input(t("cross.source"), key=K["src"], help=t("cross.source_help", cap=MAX_TOKENS), persist_state="session")
right.text_input(t("cross.target"), key=K["tgt"], help=t("cross.target_help", cap=MAX_TOKENS), persist_state="session")
cols = st.columns([2, 2, 2, 3], vertical_alignment="bottom")
size_inputs(cols, K["d_model"], K["heads"], K["seed"], MAX_D_MODEL, MAX_SEED)
cols[3].toggle(t("cross.causal"), key=K["causal"], help=t("cross.causal_help"), persist_state="session")

source_typed = tokenize(st.session_state[K["src"]])
source = source_typed[:MAX_TOKENS]
past_end = [j for j in st.session_state[K["pad"]] if j >= len(source)]
if past_end:
    st.session_state[K["pad"]] = [j for j in st.session_state[K["pad"]] if j < len(source)]
st.multiselect(
    t("cross.pad"),
    list(range(len(source))),
    key=K["pad"],
    format_func=lambda j: f"{j} · {source[j]}",
    help=t("cross.pad_help"),
    placeholder=t("cross.pad_none"),
    persist_state="session",
)
if past_end:
    st.caption(t("cross.pad_past_end", items=", ".join(map(str, past_end)), n=len(source)))

v = state.values(SCOPE, PARAMS)
config = CrossConfig(v["src"], v["tgt"], v["causal"], tuple(v["pad"]), v["d_model"], v["heads"], v["seed"])
state.save(SCOPE, PARAMS)

empty = [name for name, raw in (("source", v["src"]), ("target", v["tgt"])) if not tokenize(raw)]
for name in empty:
    st.info(t(f"cross.empty_{name}"), icon=":material/edit:")

if not empty:
    result = run_cross(config)
    for name, typed in (("source", result.n_source_typed), ("target", result.n_target_typed)):
        if typed > MAX_TOKENS:
            st.warning(t(f"cross.too_many_{name}", n=typed, cap=MAX_TOKENS), icon=":material/content_cut:")
    if result.all_hidden:
        st.warning(t("cross.all_hidden"), icon=":material/visibility_off:")

    src, tgt, n_heads = result.source, result.target, config.heads
    t_src, t_tgt, d_k = len(src), len(tgt), result.cross.d_k
    names = [head_name(h) for h in range(n_heads)]
    dims = dim_labels(config.d_model)
    visible = [tok for tok, keep in zip(src, result.keep.tolist(), strict=True) if keep]
    st.caption(
        t("cross.summary", t_src=t_src, t_tgt=t_tgt, hidden=t_src - len(visible), d_k=d_k, heads=n_heads),
    )

    def grid(mats: list[np.ndarray], rows, cols_, key: str, **kw) -> None:
        if len(mats) == 1:
            chart(matrix_figure(mats[0], rows, cols_, **kw), key)
        else:
            chart(grid_figure(mats, names, rows, cols_, **kw), key)

    # 1. The decoder's own (masked) self-attention
    stage(
        1,
        t("cross.decoder_title"),
        r"A^{dec}_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}} + M_{causal}\right),"
        r"\quad H_{tgt} = X_{tgt} + \mathrm{MHA}(X_{tgt})",
        shape_text("A_dec", ["H", "T_tgt", "T_tgt"], [n_heads, t_tgt, t_tgt]),
        t("cross.decoder_note_causal") if config.causal else t("cross.decoder_note_open"),
    )
    heads_dec = result.decoder.heads
    square = dict(row_name=t("cross.target_token"), col_name=t("cross.target_token"))
    grid(
        [heads_dec.masked[h].numpy() for h in range(n_heads)],
        tgt,
        tgt,
        "cr.dec_masked",
        blocked_text=t("cross.blocked"),
        **square,
    )
    grid([heads_dec.weights[h].numpy() for h in range(n_heads)], tgt, tgt, "cr.dec_weights", kind="prob", **square)

    # 2. Cross-attention: target rows, source columns
    stage(
        2,
        t("cross.scores_title"),
        r"S_h = \frac{(H_{tgt} W_Q)_h\,(X_{src} W_K)_h^\top}{\sqrt{d_k}} + M_{pad}",
        shape_text("S", ["H", "T_tgt", "T_src"], [n_heads, t_tgt, t_src]),
        t("cross.scores_note"),
    )
    rect = dict(row_name=t("cross.target_token"), col_name=t("cross.source_token"))
    heads_x = result.cross.heads
    grid(
        [heads_x.masked[h].numpy() for h in range(n_heads)],
        tgt,
        src,
        "cr.masked",
        blocked_text=t("cross.padding"),
        **rect,
    )

    stage(
        3,
        t("cross.weights_title"),
        r"A_h = \mathrm{softmax}(S_h),\qquad Z_h = A_h\,(X_{src} W_V)_h",
        shape_text("A", ["H", "T_tgt", "T_src"], [n_heads, t_tgt, t_src]),
        t("cross.weights_note"),
    )
    grid([heads_x.weights[h].numpy() for h in range(n_heads)], tgt, src, "cr.weights", kind="prob", **rect)
    if result.all_hidden:
        st.warning(t("cross.rows_see_nothing", n=t_tgt), icon=":material/block:")
    fig = matrix_figure(
        result.cross.output.numpy(),
        tgt,
        dims,
        title=t("cross.output"),
        row_name=t("cross.target_token"),
        col_name=t("cross.dim"),
    )
    chart(fig, "cr.output")

    # 4. The fixed-length bottleneck against one context per target token
    stage(
        4,
        t("cross.bottleneck_title"),
        r"c = \frac{1}{|S|}\sum_{j \in S} h_j \quad\text{vs}\quad c_i = \sum_j \bar a_{ij}\, h_j",
        shape_text("c_i", ["T_tgt", "d_model"], [t_tgt, config.d_model]),
        t("cross.bottleneck_note"),
    )
    b = result.bottleneck
    if b is None:
        st.info(t("cross.bottleneck_none"), icon=":material/visibility_off:")
    else:
        rows = [t("cross.c_fixed")] + [f"c · {tok}" for tok in tgt]
        stacked = np.vstack([b.c.numpy()[None], b.contexts.numpy()])
        chart(matrix_figure(stacked, rows, dims, row_name=t("cross.context"), col_name=t("cross.dim")), "cr.contexts")
        frame = pd.DataFrame(
            {
                t("cross.target_token"): tgt,
                "|c_i − c|": [f"{d:.3f}" for d in b.distance.tolist()],
                "cos(c_i, c)": [f"{c:.3f}" for c in b.cosine.tolist()],
            }
        )
        st.dataframe(frame, hide_index=True, width="stretch")
        st.caption(
            t(
                "cross.bottleneck_stats",
                spread=f"{b.spread:.3f}",
                far=md_escape(tgt[int(b.distance.argmax())]),
                dist=f"{float(b.distance.max()):.3f}",
            )
        )
    st.markdown(t("cross.why"))

    # 5. The same numbers in PyTorch
    stage(
        5,
        t("cross.check_title"),
        r"\texttt{mha(query=}H_{tgt}\texttt{, key=}X_{src}\texttt{, value=}X_{src}\texttt{, key\_padding\_mask)}",
        "",
        t("cross.check_note"),
    )
    check = check_cross(result, config)
    check_table(
        [
            (t("cross.check_cross"), "F.scaled_dot_product_attention", check.sdpa),
            (t("cross.check_cross"), "nn.MultiheadAttention", check.mha),
            (t("cross.check_decoder"), "nn.MultiheadAttention", check.decoder),
        ]
    )
    if math.isnan(check.mha):
        st.info(t("cross.mha_nan"), icon=":material/info:")
