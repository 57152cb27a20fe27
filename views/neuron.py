"""Neuron view: one query token of one head, every product, sum, softmax and weighted value behind its output."""

import pandas as pd
import streamlit as st
import torch.nn.functional as F

from attnlab.anatomy import neuron, thinking_machines
from attnlab.attention import attention_steps
from attnlab.figures import dim_labels, matrix_figure
from attnlab.params import Param, choice, int_in
from attnlab.tokens import MAX_TOKENS
from attnlab.ui import lab, state
from attnlab.ui.anatomy import adopt_lab_state, check_table, fmt_diff, save_with_lab, vector
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape, shape_text, stage, token_chips

SCOPE = "neuron"
PRESETS = ("lab", "thinking")
PARAMS = (
    Param("q", 0, int_in(0, MAX_TOKENS - 1, 0)),
    Param("h", 1, int_in(1, lab.MAX_D_MODEL, 1)),
    Param("preset", "lab", choice(PRESETS, "lab")),
    Param("tq", 0, int_in(0, 1, 0)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}
QUERY, LAB_HEAD_SEEN = "lab.query", "_neuron.lab_head"

st.title(t("neuron.title"))
st.caption(t("neuron.intro"))
lab.load()
adopt_lab_state([QUERY])
first = not st.session_state.get(f"_loaded.{SCOPE}")
state.load(SCOPE, PARAMS)
if first:
    if "q" in st.query_params:  # a shared link names the query token; the Playground's chips follow it
        st.session_state[QUERY] = st.session_state[K["q"]]
    # a link that names the head keeps it; otherwise take the head the Playground was showing
    st.session_state[LAB_HEAD_SEEN] = st.session_state[lab.K["head"]] if "h" in st.query_params else None
if st.session_state[lab.K["head"]] != st.session_state.get(LAB_HEAD_SEEN):
    st.session_state[LAB_HEAD_SEEN] = st.session_state[lab.K["head"]]
    if st.session_state[lab.K["head"]] >= 1:
        st.session_state[K["h"]] = st.session_state[lab.K["head"]]

st.segmented_control(
    t("neuron.preset"),
    PRESETS,
    key=K["preset"],
    required=True,
    format_func={p: t(f"neuron.preset_{p}") for p in PRESETS}.get,
    persist_state="session",
)
preset = st.session_state[K["preset"]]

if preset == "thinking":
    example = thinking_machines()
    tokens, q_all, k_all, v_all = example.tokens, example.q, example.k, example.v
    st.segmented_control(
        t("neuron.query_token"),
        [0, 1],
        key=K["tq"],
        required=True,
        format_func=tokens.__getitem__,
        persist_state="session",
    )
    i, h, n_heads, causal = st.session_state[K["tq"]], 0, 1, False
    own = attention_steps(q_all, k_all, v_all).output[i]
    sdpa = F.scaled_dot_product_attention(q_all, k_all, v_all)[i]
    origin = t("neuron.origin_thinking")
    ready = True
else:
    with st.expander(t("neuron.lab_settings"), icon=":material/tune:"):
        lab.controls()
    result = lab.compute()
    ready = lab.text_status(result)
    if ready:
        tokens, steps = result.tokens, result.steps
        n_heads, causal = steps.n_heads, st.session_state[lab.K["causal"]]
        picked = st.session_state.get(QUERY)
        if picked is None or picked >= len(tokens):
            if picked is not None and first:
                state.add_problem(SCOPE, t("neuron.url_query_past_end", q=picked, n=len(tokens)))
            st.session_state[QUERY] = 0 if picked is None else len(tokens) - 1
        if st.session_state[K["h"]] > n_heads:
            if first:
                state.add_problem(SCOPE, t("neuron.url_head_past_end", h=st.session_state[K["h"]], n=n_heads))
            st.session_state[K["h"]] = n_heads
        state.show_problems(SCOPE)
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        with left:
            token_chips(tokens, key=QUERY)
        right.selectbox(
            t("neuron.head"),
            list(range(1, n_heads + 1)),
            key=K["h"],
            format_func={x: t("lab.check_head", h=x) for x in range(1, n_heads + 1)}.get,
            persist_state="session",
        )
        i = st.session_state[QUERY] if st.session_state[QUERY] is not None else 0
        h = st.session_state[K["h"]] - 1
        heads = steps.heads
        q_all, k_all, v_all = heads.q[h], heads.k[h], heads.v[h]
        own = heads.output[h, i]
        sdpa = F.scaled_dot_product_attention(heads.q, heads.k, heads.v, is_causal=causal)[h, i]
        origin = t("neuron.origin_lab", h=h + 1, lo=h * steps.d_k, hi=(h + 1) * steps.d_k)
st.session_state[K["q"]] = st.session_state.get(QUERY) or 0
save_with_lab(SCOPE, PARAMS)
state.show_problems(lab.SCOPE)

if ready:
    n = neuron(q_all, k_all, v_all, i, is_causal=causal)
    d_k, t_len, tok_i = q_all.size(-1), len(tokens), tokens[i]
    dims = dim_labels(d_k)
    cells = dict(text=d_k <= 16)  # 64 numbers in a row are unreadable; hover still gives each one
    key_name, dim = t("neuron.key"), t("neuron.dim")
    st.markdown(t("neuron.focus", token=md_escape(tok_i), i=i, h=h + 1, n=n_heads, d_k=d_k))
    st.caption(origin)

    stage(1, t("neuron.q_title"), rf"q_{{{i}}}", shape_text("q_i", ["d_k"], [d_k]), t("neuron.q_note"))
    chart(
        matrix_figure(vector(n.q_i.numpy()), [tok_i], dims, row_name=t("neuron.query"), col_name=dim, **cells), "nv.q"
    )

    stage(
        2,
        t("neuron.k_title"),
        r"k_j,\ j = 0 \dots T-1",
        shape_text("K", ["T", "d_k"], [t_len, d_k]),
        t("neuron.k_note"),
    )
    chart(matrix_figure(n.k.numpy(), tokens, dims, row_name=key_name, col_name=dim, **cells), "nv.k")

    stage(
        3,
        t("neuron.products_title"),
        rf"q_{{{i}}} \odot k_j",
        shape_text("q_i ⊙ K", ["T", "d_k"], [t_len, d_k]),
        t("neuron.products_note"),
    )
    chart(matrix_figure(n.products.numpy(), tokens, dims, row_name=key_name, col_name=dim, **cells), "nv.products")

    stage(
        4,
        t("neuron.softmax_title"),
        rf"a_j = \mathrm{{softmax}}_j\!\left(\frac{{q_{{{i}}} \cdot k_j}}{{\sqrt{{{d_k}}}}}\right)"
        rf",\quad \frac{{1}}{{\sqrt{{{d_k}}}}} = {n.scale:.6g}",
        shape_text("a", ["T"], [t_len]),
        t("neuron.softmax_note"),
    )
    blocked = n.blocked.tolist()
    frame = pd.DataFrame(
        {
            key_name: [f"{j} · {tok}" for j, tok in enumerate(tokens)],
            "q·k = Σ q⊙k": [f"{x:.6g}" for x in n.dots.tolist()],
            "÷ √d_k": [f"{x:.6g}" for x in n.scaled.tolist()],
            t("neuron.mask"): [t("neuron.blocked") if b else "" for b in blocked],
            "softmax": [f"{x:.4f}" for x in n.weights.tolist()],
        }
    )
    st.dataframe(frame, hide_index=True, width="stretch")
    if n.sees_nothing:
        st.warning(t("neuron.sees_nothing"), icon=":material/block:")
    visible = [j for j in range(t_len) if not blocked[j]]
    if len(visible) >= 2:
        top = sorted(visible, key=lambda j: -float(n.weights[j]))[:2]
        a, b = top
        st.markdown(
            t(
                "neuron.worked",
                ta=md_escape(tokens[a]),
                tb=md_escape(tokens[b]),
                sa=f"{float(n.dots[a]):.6g}",
                sb=f"{float(n.dots[b]):.6g}",
                root=f"{1 / n.scale:.6g}",
                xa=f"{float(n.scaled[a]):.6g}",
                xb=f"{float(n.scaled[b]):.6g}",
                wa=f"{float(n.weights[a]):.2f}",
                wb=f"{float(n.weights[b]):.2f}",
            )
        )

    stage(
        5,
        t("neuron.weighted_title"),
        r"a_j\, v_j",
        shape_text("a ⊙ V", ["T", "d_k"], [t_len, d_k]),
        t("neuron.weighted_note"),
    )
    chart(matrix_figure(n.weighted.numpy(), tokens, dims, row_name=key_name, col_name=dim, **cells), "nv.weighted")

    stage(
        6,
        t("neuron.z_title"),
        rf"z_{{{i}}} = \sum_j a_j\, v_j",
        shape_text("z_i", ["d_k"], [d_k]),
        t("neuron.z_note"),
    )
    chart(matrix_figure(vector(n.z.numpy()), [tok_i], dims, row_name=t("neuron.query"), col_name=dim, **cells), "nv.z")
    diff = float((n.z - own).abs().max())
    check_table(
        [
            (t("neuron.check_row", i=i, h=h + 1), t("neuron.check_against"), diff),
            (t("neuron.check_row", i=i, h=h + 1), "F.scaled_dot_product_attention", float((n.z - sdpa).abs().max())),
        ]
    )
    st.caption(t("neuron.check_caption", diff=fmt_diff(diff)))
    if preset == "lab":
        st.page_link("views/playground.py", label=t("neuron.back"), icon=":material/arrow_back:")
