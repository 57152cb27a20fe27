"""The Neuron view's sections: the traced query, its presets, each product, sum, softmax and weighted value."""

from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

from attnlab import links
from attnlab.anatomy.neuron import TracedNeuron, thinking_machines, trace
from attnlab.figures import dim_labels, matrix_figure, vector
from attnlab.tolerance import size
from attnlab.ui.app import first_screen, fold
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import md_escape
from attnlab.ui.app.widgets import chart, segmented, selectbox, shape_text, stage, token_chips
from attnlab.ui.parts import lab
from attnlab.ui.parts.checks import check_table, fmt_diff

PRESETS = links.NEURON_PRESETS
PAGE = PageState("neuron", links.params("neuron"))
LAB_HEAD_SEEN = "_neuron.lab_head"
LAB_SETTINGS_OPEN = "neuron.lab_settings_open"  # the folded box of the Playground's settings


@dataclass(frozen=True)
class Traced:
    """What the page draws: the tokens, one head's traced query, and where the numbers came from."""

    tokens: list[str]
    traced: TracedNeuron
    head: int  # 0-based
    n_heads: int
    origin: str


def follow_the_playground(first: bool) -> None:
    """A link's query token drives the Playground's chips; a head picked on the Playground becomes this page's head."""
    if first:
        if "q" in st.query_params:
            st.session_state[lab.QUERY] = PAGE["q"]
        st.session_state[LAB_HEAD_SEEN] = lab.LAB["head"] if "h" in st.query_params else None
    if lab.LAB["head"] != st.session_state.get(LAB_HEAD_SEEN):
        st.session_state[LAB_HEAD_SEEN] = lab.LAB["head"]
        if lab.LAB["head"] >= 1:
            PAGE["h"] = lab.LAB["head"]


def thinking_preset() -> Traced:
    """The classic two-word example: pick which of the two words asks."""
    example = thinking_machines()
    labels = dict(enumerate(example.tokens))
    segmented(PAGE, "tq", t("neuron.query_token"), options=list(labels), labels=labels)
    traced = trace(example.q, example.k, example.v, PAGE["tq"])
    return Traced(example.tokens, traced, 0, 1, t("neuron.origin_thinking"))


def clamp_to_result(tokens: list[str], n_heads: int, first: bool) -> None:
    """A query past the end of the text or a head past the head count is replaced, and said on the first run."""
    picked = st.session_state.get(lab.QUERY)
    if picked is None or picked >= len(tokens):
        if picked is not None and first:
            PAGE.add_problem("neuron.url_query_past_end", q=picked, n=len(tokens))
        st.session_state[lab.QUERY] = 0 if picked is None else len(tokens) - 1
    if PAGE["h"] > n_heads:
        if first:
            PAGE.add_problem("neuron.url_head_past_end", h=PAGE["h"], n=n_heads)
        PAGE["h"] = n_heads


def playground_preset(first: bool) -> Traced | None:
    """A query token and head of the Playground's own computation (None when there is nothing to compute)."""
    with fold.folded(st, t("neuron.lab_settings"), LAB_SETTINGS_OPEN, icon=":material/tune:") as opened:
        if opened:  # built once opened: folded, the Playground's widgets still cost a phone's first chart (issue 61)
            lab.controls()
    result = lab.compute()
    if not lab.text_status(result):
        return None
    steps, tokens = result.steps, result.tokens
    clamp_to_result(tokens, steps.n_heads, first)
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    with left:
        token_chips(tokens, key=lab.QUERY)
    heads = {x: t("lab.check_head", h=x) for x in range(1, steps.n_heads + 1)}
    selectbox(PAGE, "h", t("neuron.head"), where=right, options=list(heads), labels=heads)
    i, h = st.session_state[lab.QUERY] or 0, PAGE["h"] - 1
    heads_steps = steps.heads
    mask = heads_steps.bias[h]  # (T, T): the run's mask as added to the scores (-inf blocked; ALiBi's bias if on)
    modern = result.config is not None and result.config.modern
    traced = trace(heads_steps.q[h], heads_steps.k[h], heads_steps.v[h], i, **with_mask(mask, modern))
    origin = t("neuron.origin_lab", h=h + 1, lo=h * steps.d_k, hi=(h + 1) * steps.d_k)
    return Traced(tokens, traced, h, steps.n_heads, origin)


def with_mask(bias, modern: bool) -> dict:
    """The trace's mask argument: the classic causal switch, or the run's own additive mask for modern settings."""
    return {"attn_mask": bias} if modern else {"is_causal": lab.LAB["causal"]}


def row_chart(values: torch.Tensor, token: str, key: str) -> None:
    """One vector (q_i or z_i) as a one-row heatmap."""
    d_k = values.size(-1)
    fig = matrix_figure(
        vector(values.numpy()),
        [token],
        dim_labels(d_k),
        row_name=t("neuron.query"),
        col_name=t("neuron.dim"),
        text=d_k <= 16,
    )
    chart(fig, key)


def keys_chart(values: torch.Tensor, tokens: list[str], key: str) -> None:
    """A (T, d_k) matrix with one row per key."""
    d_k = values.size(-1)
    fig = matrix_figure(
        values.numpy(), tokens, dim_labels(d_k), row_name=t("neuron.key"), col_name=t("neuron.dim"), text=d_k <= 16
    )
    chart(fig, key)


def scores_table(view: Traced) -> None:
    """q·k, ÷ √d_k, the mask and softmax for every key, and the worked sentence for the two largest weights."""
    n, tokens = view.traced.neuron, view.tokens
    blocked = n.blocked.tolist()
    frame = pd.DataFrame(
        {
            t("neuron.key"): [f"{j} · {tok}" for j, tok in enumerate(tokens)],
            "q·k = Σ q⊙k": [f"{x:.6g}" for x in n.dots.tolist()],
            "÷ √d_k": [f"{x:.6g}" for x in n.scaled.tolist()],
            t("neuron.mask"): [t("neuron.blocked") if b else "" for b in blocked],
            "softmax": [f"{x:.4f}" for x in n.weights.tolist()],
        }
    )
    st.dataframe(frame, hide_index=True, width="stretch")
    if n.sees_nothing:
        st.warning(t("neuron.sees_nothing"), icon=":material/block:")
    visible = [j for j in range(len(tokens)) if not blocked[j]]
    if len(visible) < 2:
        return
    a, b = sorted(visible, key=lambda j: -float(n.weights[j]))[:2]
    g = lambda x: f"{float(x):.6g}"  # noqa: E731 - one format, eight numbers
    worked = t(
        "neuron.worked",
        ta=md_escape(tokens[a]),
        tb=md_escape(tokens[b]),
        sa=g(n.dots[a]),
        sb=g(n.dots[b]),
        root=g(1 / n.scale),
        xa=g(n.scaled[a]),
        xb=g(n.scaled[b]),
        wa=f"{float(n.weights[a]):.2f}",
        wb=f"{float(n.weights[b]):.2f}",
    )
    st.markdown(worked)


def stages_of(view: Traced) -> None:
    """The six steps from q_i to z_i, then the check against the full computation and SDPA: q_i and K here, the
    rest in `later_stages`."""
    n, tokens = view.traced.neuron, view.tokens
    i, d_k, t_len = n.i, n.q_i.size(-1), len(tokens)
    stage(1, t("neuron.q_title"), rf"q_{{{i}}}", shape_text("q_i", ["d_k"], [d_k]), t("neuron.q_note"))
    row_chart(n.q_i, tokens[i], "nv.q")
    stage(
        2,
        t("neuron.k_title"),
        r"k_j,\ j = 0 \dots T-1",
        shape_text("K", ["T", "d_k"], [t_len, d_k]),
        t("neuron.k_note"),
    )
    keys_chart(n.k, tokens, "nv.k")
    first_screen.rest(lambda: later_stages(view))  # a new visitor's browser draws q_i and K first


def later_stages(view: Traced) -> None:
    """Steps 3 to 6 (the products, the softmax, the weighted values, z_i), then the check."""
    n, tokens = view.traced.neuron, view.tokens
    i, d_k, t_len = n.i, n.q_i.size(-1), len(tokens)
    shape = shape_text("q_i ⊙ K", ["T", "d_k"], [t_len, d_k])
    stage(3, t("neuron.products_title"), rf"q_{{{i}}} \odot k_j", shape, t("neuron.products_note"))
    keys_chart(n.products, tokens, "nv.products")
    stage(
        4,
        t("neuron.softmax_title"),
        rf"a_j = \mathrm{{softmax}}_j\!\left(\frac{{q_{{{i}}} \cdot k_j}}{{\sqrt{{{d_k}}}}}\right)"
        rf",\quad \frac{{1}}{{\sqrt{{{d_k}}}}} = {n.scale:.6g}",
        shape_text("a", ["T"], [t_len]),
        t("neuron.softmax_note"),
    )
    scores_table(view)
    shape = shape_text("a ⊙ V", ["T", "d_k"], [t_len, d_k])
    stage(5, t("neuron.weighted_title"), r"a_j\, v_j", shape, t("neuron.weighted_note"))
    keys_chart(n.weighted, tokens, "nv.weighted")
    stage(
        6, t("neuron.z_title"), rf"z_{{{i}}} = \sum_j a_j\, v_j", shape_text("z_i", ["d_k"], [d_k]), t("neuron.z_note")
    )
    row_chart(n.z, tokens[i], "nv.z")
    traced, what = view.traced, t("neuron.check_row", i=i, h=view.head + 1)
    check_table(
        [
            (what, t("neuron.check_against"), traced.against_row),
            (what, "F.scaled_dot_product_attention", traced.against_sdpa),
        ],
        size(n.z),
    )
    st.caption(t("neuron.check_caption", diff=fmt_diff(traced.against_row)))
