"""The Multi-head page's MHA / GQA / MQA section: K/V heads and sizes, cache bytes, who shares what, output changes."""

from __future__ import annotations

import streamlit as st

from attnlab.anatomy.grouped import BYTES_PER_NUMBER, Comparison, compare
from attnlab.bench.memory import format_bytes
from attnlab.figures import grid_figure
from attnlab.figures.grouped import sharing_figure
from attnlab.multihead import MultiHeadWeights
from attnlab.params import divisors
from attnlab.pipeline import LabResult
from attnlab.ui.app.i18n import t
from attnlab.ui.app.latex import words
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import markdown_table
from attnlab.ui.app.widgets import chart, selectbox, shape_text, stage
from attnlab.ui.parts import lab

INDEX = 10  # the section's number on the page


def fit(page: PageState) -> None:
    """Query heads that divide d_model and key/value heads that divide them (after a change above, said by the
    widgets' new values; a link's bad values were said on load)."""
    page.fit_heads("d_model", "gqa_h", d_state=lab.LAB)
    page.fit_heads("gqa_h", "gqa_kv")


def square_weights(result: LabResult) -> MultiHeadWeights:
    """The page's multi-head weights, or, when the page already shares key/value heads, the seed's square ones."""
    weights = result.weights
    if not weights.grouped:
        return weights
    st.caption(t("gqa.seeded", kv=weights.kv_heads(result.steps.n_heads)))
    return MultiHeadWeights.random(weights.d_model, lab.LAB["seed"], lab.LAB["init"], dtype=weights.w_q.dtype)


def controls(page: PageState, d_model: int) -> None:
    """The comparison's query heads (divisors of d_model) and the GQA column's key/value heads (divisors of H)."""
    left, right = st.columns(2)
    heads = {h: t("gqa.heads_option", h=h, d_k=d_model // h) for h in divisors(d_model)}
    selectbox(page, "gqa_h", t("gqa.heads"), where=left, options=list(heads), labels=heads)
    page.fit_heads("gqa_h", "gqa_kv")
    n = page["gqa_h"]
    kv = {g: t("gqa.kv_option", kv=g, g=n // g) for g in divisors(n)}
    selectbox(page, "gqa_kv", t("gqa.kv"), where=right, options=list(kv), labels=kv, help=t("gqa.kv_help"))


def table(found: Comparison, d_model: int) -> None:
    """K/V heads, shapes, cache numbers and bytes per token, and the output change: one column per variant, so the
    table stays four columns wide on a phone (nine quantities across did not fit 390 px)."""
    n_t = found.tokens
    variants = found.variants
    header = (t("gqa.col_variant"), *(t(f"gqa.name_{v.name}") for v in variants))
    cells = {
        t("gqa.col_kv"): [v.n_kv_heads for v in variants],
        t("gqa.col_group"): [v.group for v in variants],
        t("gqa.col_w"): [f"({d_model}, {v.weights.d_kv})" for v in variants],
        t("gqa.col_kvshape"): [f"({n_t}, {v.weights.d_kv})" for v in variants],
        t("gqa.col_numbers"): [v.kv_numbers_per_token() for v in variants],
        t("gqa.col_bytes"): [format_bytes(v.cache_bytes_per_token()) for v in variants],
        t("gqa.col_total", t=n_t): [format_bytes(v.cache_bytes_per_token() * n_t) for v in variants],
        t("gqa.col_diff"): [f"{v.max_diff:.3g}" for v in variants],
    }
    rows = [(name, *values) for name, values in cells.items()]
    st.markdown(markdown_table(header, rows))
    st.caption(t("gqa.bytes_note"))


def figures(found: Comparison, tokens: list[str], d_model: int) -> None:
    """Who reads which key/value head; each variant's output; each output's distance from MHA's."""
    names = [t(f"gqa.name_{v.name}") for v in found.variants]
    kv_of = [[v.steps.kv_head(h) for h in range(found.n_heads)] for v in found.variants]
    st.markdown(f"**{t('gqa.share_chart')}**")
    heads = [f"q{h + 1}" for h in range(found.n_heads)]
    chart(sharing_figure(names, kv_of, heads, t("gqa.kv_head"), t("gqa.share_hover")), "mh.gqa_share")
    dims = [f"d{i}" for i in range(d_model)]
    axes = dict(row_name=t("stages.token"), col_name=t("stages.dim"))
    st.markdown(f"**{t('gqa.outputs_chart')}**")
    outputs = [v.steps.output.numpy() for v in found.variants]
    chart(grid_figure(outputs, names, tokens, dims, **axes), "mh.gqa_out")
    if len(found.variants) == 1:
        return
    st.markdown(f"**{t('gqa.diffs_chart')}**")
    diffs = [v.diff.abs().numpy() for v in found.variants[1:]]
    chart(grid_figure(diffs, names[1:], tokens, dims, kind="positive", **axes), "mh.gqa_diff")
    cols = st.columns(2 * (len(found.variants) - 1))
    for i, v in enumerate(found.variants[1:]):
        name = t(f"gqa.name_{v.name}")
        cols[2 * i].metric(t("gqa.diff_metric", name=name), f"{v.max_diff:.3g}")
        cols[2 * i + 1].metric(t("gqa.rel_metric", name=name), f"{v.rel_diff:.3g}")
    st.caption(t("gqa.random_note"))


def grouped_section(result: LabResult, page: PageState) -> None:
    """10. MHA, GQA and MQA on the page's input, the GQA weights mean-pooled from MHA's (Ainslie et al.)."""
    d_model = result.weights.d_model
    fit(page)
    n, kv = page["gqa_h"], page["gqa_kv"]
    d_k = d_model // n
    stage(
        INDEX,
        t("gqa.title"),
        rf"W_K^{{(g)}} = \frac{{1}}{{|g|}} \sum_{{h \in g}} W_K^{{(h)}}, \qquad "
        rf"{words(t('gqa.tex_cache'))} \allowbreak "
        rf"= 2 \cdot H_{{kv}} \cdot d_k \cdot {BYTES_PER_NUMBER}\ {words(t('gqa.tex_bytes'))}",
        shape_text("K, V", ["T", "H_kv·d_k"], [len(result.tokens), kv * d_k]),
        t("gqa.note"),
    )
    st.markdown(t("gqa.body"))
    controls(page, d_model)
    n, kv = page["gqa_h"], page["gqa_kv"]
    found = compare(result.x, square_weights(result), n, kv, is_causal=lab.LAB["causal"])
    if n == 1:
        st.info(t("gqa.one_head"), icon=":material/info:")
    elif len(found.variants) < 3 and len(divisors(n)) == 2:
        st.info(t("gqa.same_only", h=n), icon=":material/info:")
    table(found, d_model)
    figures(found, result.tokens, d_model)
