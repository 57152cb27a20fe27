"""The KV-cache page's MLA section: a small multi-head latent attention, stage by stage, then absorbed.

Its two runs are an `st.cache_resource` value keyed on the section's sizes and seed (numbers only, shared
read-only): a change elsewhere on the page reruns nothing of it. Text and figures are built per session.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from attnlab.figures import dim_labels, matrix_figure
from attnlab.figures.kvcache import per_token_figure
from attnlab.mla import MLASteps, MLAWeights, cache_per_token, mla_steps
from attnlab.params import divisor_at_most
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import chart, number, slider
from attnlab.ui.pages.kv_cache.sections import PAGE


@dataclass(frozen=True)
class Small:
    """The small MLA the section draws: its sizes, its two runs and the tokens' names."""

    heads: int
    dh: int  # each head's unrotated query/key width and value width
    latent: int
    rope: int
    plain: MLASteps
    absorbed: MLASteps
    tokens: tuple[str, ...]
    diff_weights: float  # the largest |absorbed - plain| over every head's weights
    diff_output: float

    @property
    def d_model(self) -> int:
        """The model width: heads x head width."""
        return self.heads * self.dh


@st.cache_resource(show_spinner=False, max_entries=64)
def small_mla(tokens: int, heads: int, dh: int, latent: int, rope: int, seed: int) -> Small:
    """Seeded weights and input, run plain and absorbed (float32, causal), as the notebook does too."""
    weights = MLAWeights.random(heads * dh, heads, latent, dh, rope, dh, seed=seed)
    x = torch.randn(tokens, heads * dh, generator=torch.Generator().manual_seed(seed))
    plain, folded = mla_steps(x, weights, heads), mla_steps(x, weights, heads, absorbed=True)
    diff_w = float((folded.weights - plain.weights).abs().max())
    diff_o = float((folded.output - plain.output).abs().max())
    return Small(heads, dh, latent, rope, plain, folded, tuple(f"x{i + 1}" for i in range(tokens)), diff_w, diff_o)


def controls() -> Small:
    """Tokens, heads, head width, latent, rotated width, seed; the drawn head stays one that exists."""
    cols = st.columns(6)
    for col, name in zip(cols, ("mla_tokens", "mla_heads", "mla_dh", "mla_latent", "mla_rope", "seed"), strict=True):
        number(PAGE, name, t(f"kvcache.{name}"), where=col, step=2 if name == "mla_rope" else 1)
    rope = PAGE["mla_rope"]
    if rope % 2:  # typed odd: RoPE turns pairs
        rope = rope + 1 if rope < PAGE.params["mla_rope"].hi else rope - 1
        st.info(t("kvcache.odd_rope", asked=PAGE["mla_rope"], used=rope))
    PAGE["mla_head"] = min(PAGE["mla_head"], PAGE["mla_heads"])
    return small_mla(PAGE["mla_tokens"], PAGE["mla_heads"], PAGE["mla_dh"], PAGE["mla_latent"], rope, PAGE["seed"])


def array(x: torch.Tensor) -> np.ndarray:
    """A tensor as float64 numpy for a figure (converted by numpy: no torch op on a rerun)."""
    return x.numpy().astype(np.float64)


def section() -> None:
    """MLA's steps, folded under the section's title until opened (`fold.section`): its ten charts, sent with the
    rest, more than doubled the page's time to its first chart on a phone (issue 61)."""
    with fold.section(PAGE, "mla", t("kvcache.mla_title"), icon=":material/compress:") as drawn:
        if drawn:
            steps()


def steps() -> None:
    """X -> latent (cached) -> per-head keys and values -> the shared rotated key -> scores -> output; absorbed."""
    st.markdown(t("kvcache.mla_intro"))
    m = controls()
    if m.heads > 1:
        slider(PAGE, "mla_head", t("kvcache.mla_head"), hi=m.heads)
    h, p, rows = PAGE["mla_head"] - 1, m.plain, m.tokens
    step(1, "x", r"X \in \mathbb{R}^{T \times d}", m.d_model)
    chart(matrix_figure(array(p.x), rows, dim_labels(m.d_model)), "kv.mla.x")
    step(2, "latent", r"c_t = \mathrm{RMSNorm}(x_t W_{DKV}) \in \mathbb{R}^{d_c}", m.latent)
    chart(matrix_figure(array(p.latent), rows, dim_labels(m.latent)), "kv.mla.latent")
    step(3, "rope", r"k^R_t = \mathrm{RoPE}_t(x_t W_{KR}) \in \mathbb{R}^{d_R}", m.rope)
    chart(matrix_figure(array(p.k_rope), rows, dim_labels(m.rope)), "kv.mla.rope")
    step(4, "kv", r"k_{t,h} = [\,c_t W_{UK,h}\ ;\ k^R_t\,], \quad v_{t,h} = c_t W_{UV,h}", h + 1)
    names = [f"{t('kvcache.nope')}{i}" for i in range(m.dh)] + [f"{t('kvcache.rot')}{i}" for i in range(m.rope)]
    k_fig = matrix_figure(array(p.k[h]), rows, names, col_breaks=[m.dh], title=t("kvcache.k_head", h=h + 1))
    chart(k_fig, "kv.mla.k")
    chart(matrix_figure(array(p.v[h]), rows, dim_labels(m.dh), title=t("kvcache.v_head", h=h + 1)), "kv.mla.v")
    step(5, "scores", r"a_h = \mathrm{softmax}\!\left(q_h k_h^\top / \sqrt{d_h + d_R} + M\right)", h + 1)
    title = t("kvcache.weights_plain", h=h + 1)
    chart(matrix_figure(array(p.weights[h]), rows, rows, kind="prob", title=title), "kv.mla.weights")
    step(6, "output", r"o_t = [\,a_1 v_1\ ;\ \dots\ ;\ a_H v_H\,]_t\, W_O", m.d_model)
    chart(matrix_figure(array(p.output), rows, dim_labels(m.d_model)), "kv.mla.out")
    absorbed_part(m, h)


def step(i: int, name: str, formula: str, n: int) -> None:
    """One stage's heading, formula and sentence."""
    st.markdown(f"**{i}. {t(f'kvcache.step_{name}')}**")
    latex.show(formula)
    st.caption(t(f"kvcache.step_{name}_note", n=n))


def absorbed_part(m: Small, h: int) -> None:
    """The absorbed query, both forms' weights side by side, the largest difference, and the cache per token."""
    st.markdown(f"**{t('kvcache.absorbed_title')}**")
    latex.show(r"q_{t,h} k_{s,h}^\top = (q^C_{t,h} W_{UK,h}^\top)\, c_s^\top + q^R_{t,h}\, {k^R_s}^\top")
    st.caption(t("kvcache.absorbed_note", latent=m.latent, rope=m.rope))
    a = m.absorbed
    names = dim_labels(m.latent) + [f"{t('kvcache.rot')}{i}" for i in range(m.rope)]
    q_fig = matrix_figure(array(a.q_absorbed[h]), m.tokens, names, col_breaks=[m.latent])
    chart(q_fig, "kv.mla.qabs")
    title = t("kvcache.weights_absorbed", h=h + 1)
    chart(matrix_figure(array(a.weights[h]), m.tokens, m.tokens, kind="prob", title=title), "kv.mla.absorbed")
    cols = st.columns(2)
    cols[0].metric(t("kvcache.diff_weights"), f"{m.diff_weights:.2g}", help=t("kvcache.diff_help", heads=m.heads))
    cols[1].metric(t("kvcache.diff_output"), f"{m.diff_output:.2g}")
    per_token_part(m)


def per_token_part(m: Small) -> None:
    """Numbers per token per layer: this MLA against MHA, GQA and MQA of the same width."""
    gqa = divisor_at_most(m.heads, max(m.heads // 2, 1))
    labels = [t("kvcache.bar_mha"), t("kvcache.bar_gqa", kv=gqa), t("kvcache.bar_mqa"), t("kvcache.bar_mla")]
    numbers = [cache_per_token(m.d_model, m.heads, kv) for kv in (m.heads, gqa, 1)] + [m.latent + m.rope]
    title = t("kvcache.bars_title", d=m.d_model, heads=m.heads)
    chart(per_token_figure(labels, numbers, title, t("kvcache.bars_y")), "kv.mla.bars")
    st.caption(t("kvcache.bars_note", mla=numbers[3], mha=numbers[0], times=f"{numbers[0] / numbers[3]:.1f}"))
