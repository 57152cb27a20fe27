"""The KV-cache page's settings and its first two sections: the cache of one model, and five kinds on one chart.

Everything here is arithmetic on a few integers (attnlab.kvcache), so nothing is cached; text and figures are built
per session.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attnlab import kvcache, links
from attnlab.figures.kvcache import cache_figure, human_bytes
from attnlab.kvcache import BYTES, H100_BYTES, MODELS, PARAMETERS, ModelShape
from attnlab.links.kv import CUSTOM, settle_kv
from attnlab.params import divisor_at_most
from attnlab.ui.app.i18n import t
from attnlab.ui.app.latex import chain, show, words
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, number, optional_number, segmented, selectbox

PAGE = PageState("kv", links.params("kv"))
SHAPE_INPUTS = ("layers", "heads", "kv_heads", "head_dim", "latent", "rope_dim")


@dataclass(frozen=True)
class Setting:
    """What the sections compute with: the shape used, its parameters, the context, batch and number format."""

    key: str  # a model of attnlab.kvcache.MODELS, or "custom"
    shape: ModelShape
    parameters: int
    context: int
    batch: int
    fmt: str  # bf16, fp8 or int4

    @property
    def bytes(self) -> float:
        """Bytes per cached number (and per weight)."""
        return BYTES[self.fmt]


def load() -> None:
    """The link's values; on the first load a typed shape that does not hang together is replaced and said."""
    if PAGE.load():
        v, raw = PAGE.values(), st.query_params.to_dict()
        for name, asked, used, reason in settle_kv(v, raw):
            PAGE.add_problem(f"kvcache.url_{reason}", asked=f"{name}={asked[:40]}", used=used, heads=v["heads"])
            PAGE[name] = v[name]
    PAGE.show_problems()


def controls() -> Setting:
    """Model, context, batch and number format; a typed shape's fields when the model is "custom"."""
    cols = st.columns([1.7, 1.1, 0.8, 2.8], vertical_alignment="bottom")
    labels = {k: MODELS[k].name if k in MODELS else t("kvcache.custom") for k in PAGE.params["model"].options}
    selectbox(PAGE, "model", t("kvcache.model"), where=cols[0], labels=labels)
    hi = f"{int(PAGE.params['context'].hi):,}"
    number(PAGE, "context", t("kvcache.context"), where=cols[1], step=1024, help=t("kvcache.context_help", hi=hi))
    number(PAGE, "batch", t("kvcache.batch"), where=cols[2], help=t("kvcache.batch_help"))
    fmt_labels = {f: t("kvcache.format", name=f, b=f"{BYTES[f]:g}") for f in PAGE.params["bytes"].options}
    segmented(PAGE, "bytes", t("kvcache.bytes"), where=cols[3], labels=fmt_labels)
    key = PAGE["model"]
    if key != CUSTOM:
        shape = MODELS[key]
        st.caption(t("kvcache.read_from", source=code(shape.source, 120), name=shape.name))
        return Setting(key, shape, PARAMETERS[key], PAGE["context"], PAGE["batch"], PAGE["bytes"])
    return Setting(key, typed_shape(), round(PAGE["billions"] * 1e9), PAGE["context"], PAGE["batch"], PAGE["bytes"])


def typed_shape() -> ModelShape:
    """The custom shape's inputs; kv_heads that do not divide heads, or a rotated key without a latent, are
    replaced here and said (the typed values stay in their boxes)."""
    cols = st.columns(len(SHAPE_INPUTS) + 2)
    for col, name in zip(cols, SHAPE_INPUTS, strict=False):
        number(PAGE, name, t(f"kvcache.f_{name}"), where=col, help=t(f"kvcache.f_{name}_help"))
    empty, help_text = t("kvcache.no_window"), t("kvcache.f_window_help")
    optional_number(PAGE, "window", t("kvcache.f_window"), empty=empty, where=cols[-2], help=help_text)
    number(PAGE, "billions", t("kvcache.f_billions"), where=cols[-1], step=1.0, help=t("kvcache.f_billions_help"))
    heads, kv, latent, rope = PAGE["heads"], PAGE["kv_heads"], PAGE["latent"], PAGE["rope_dim"]
    if heads % kv:
        kv = divisor_at_most(heads, kv)
        st.info(t("kvcache.kv_not_dividing", asked=code(PAGE["kv_heads"]), heads=heads, used=code(kv)))
    if rope and not latent:
        rope = 0
        st.info(t("kvcache.rope_without_latent", asked=code(PAGE["rope_dim"])))
    window = PAGE["window"] or 0
    return ModelShape(t("kvcache.custom"), PAGE["layers"], heads, kv, PAGE["head_dim"], latent, rope, window)


def cache_section(s: Setting) -> None:
    """Per token and in total, the formula filled in, and what fits beside the weights on an H100."""
    st.subheader(t("kvcache.cache_title"))
    shape, b = s.shape, s.bytes
    per_token = kvcache.bytes_per_token(shape, b)
    total = kvcache.cache_bytes(shape, s.context, s.batch, b)
    weights = kvcache.weight_bytes(s.parameters, b)
    m = st.columns(4)
    m[0].metric(t("kvcache.per_token"), human_bytes(per_token), help=t("kvcache.exact", n=f"{per_token:,g}"))
    m[1].metric(t("kvcache.total"), human_bytes(total), help=t("kvcache.total_help", t=f"{s.context:,}", batch=s.batch))
    m[2].metric(t("kvcache.weights"), human_bytes(weights), help=t("kvcache.weights_help", n=f"{s.parameters:,}"))
    m[3].metric(t("kvcache.h100_share"), f"{(total + weights) / H100_BYTES:.1%}", help=t("kvcache.h100_help"))
    formula(s, per_token, total)
    fits(s, weights, total)


def whole(x: float) -> str:
    """A byte count with thousands separators (one decimal where int4's half bytes leave one)."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def formula(s: Setting, per_token: float, total: float) -> None:
    """The formula, then the same with this setting's numbers."""
    shape, b, kept = s.shape, f"{s.bytes:g}", kvcache.cached_tokens(s.shape, s.context)
    per, cache, batch = (words(t(f"kvcache.tex_{w}")) for w in ("per_token", "cache", "batch"))
    if shape.mla:
        show(rf"{per} = L \cdot (d_c + d_R) \cdot b")
        filled = rf"{shape.layers} \cdot ({shape.latent} + {shape.rope_dim}) \cdot {b}"
    else:
        show(rf"{per} = 2 \cdot L \cdot H_{{kv}} \cdot d_{{head}} \cdot b")
        filled = rf"2 \cdot {shape.layers} \cdot {shape.kv_heads} \cdot {shape.head_dim} \cdot {b}"
    show(rf"{filled} = {whole(per_token)}\ \text{{B}}".replace(",", "{,}"))
    cap = r"\min(T, W)" if shape.window else "T"
    numbers = rf"{whole(per_token)} \cdot {s.batch} \cdot {kept:,}".replace(",", "{,}")
    chain(
        cache,
        rf"{per} \cdot {batch} \cdot {cap}",
        numbers,
        rf"{whole(total)}\ \text{{B}}".replace(",", "{,}"),
    )
    st.caption(t("kvcache.symbols"))
    if shape.mla:
        naive = kvcache.naive_bytes_per_token(shape, s.bytes)
        st.warning(
            t("kvcache.mla_naive", kv=shape.kv_heads, naive=human_bytes(naive), times=f"{naive / per_token:.0f}"),
            icon=":material/warning:",
        )
    if shape.window and s.context > shape.window:
        st.caption(t("kvcache.window_caps", w=f"{shape.window:,}", t=f"{s.context:,}"))


def fits(s: Setting, weights: float, total: float) -> None:
    """How many tokens of context fit on an H100 beside the weights, and whether the asked context does."""
    fit = kvcache.tokens_that_fit(s.shape, s.parameters, s.batch, s.bytes)
    free = H100_BYTES - weights
    if fit == 0:
        st.error(t("kvcache.no_room", weights=human_bytes(weights), free=human_bytes(max(free, 0))))
    elif fit is None:
        st.success(t("kvcache.window_fits", w=f"{s.shape.window:,}", batch=s.batch))
    else:
        key = "kvcache.fits" if total <= free else "kvcache.too_long"
        st.info(t(key, fit=f"{fit:,}", batch=s.batch, free=human_bytes(free), t=f"{s.context:,}"))


def chart_section(s: Setting) -> None:
    """MHA, GQA, MQA, MLA and a window on the model's own width, against the context length (log axes)."""
    st.subheader(t("kvcache.chart_title"))
    kinds = kvcache.same_width(s.shape)
    st.caption(
        t(
            "kvcache.chart_intro",
            layers=s.shape.layers,
            heads=s.shape.heads,
            d=s.shape.head_dim,
            gqa=kinds["gqa"].kv_heads,
            latent=kinds["mla"].latent,
            rope=kinds["mla"].rope_dim,
            w=f"{kinds['window'].window:,}",
        )
    )
    tokens = kvcache.curve_tokens(s.context, kinds["window"].window)
    series = kvcache.curves(kinds, tokens, s.batch, s.bytes)
    free = H100_BYTES - kvcache.weight_bytes(s.parameters, s.bytes)
    names = {k: t(f"kvcache.kind_{k}", kv=kinds[k].kv_heads) for k in kinds}
    names |= {"x": t("kvcache.x"), "y": t("kvcache.y", batch=s.batch, fmt=s.fmt), "free": t("kvcache.free_line")}
    title = t("kvcache.chart", name=s.shape.name)
    chart(
        cache_figure(tokens, series, names, free=free if free > 0 else None, context=s.context, title=title),
        "kv.curves",
    )
