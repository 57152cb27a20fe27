"""The scaling lesson's sections: Var(q.k) against d_k, softmax saturation with and without the scale, one query."""

import math

import streamlit as st

from attnlab import links
from attnlab.figures.lessons import saturation_figure, variance_figure, weights_bar
from attnlab.lessons import scaling as lesson
from attnlab.ui.app import latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import chart, number, toggle

N_VAR = 4000
N_SAT = 300
PAGE = PageState("lscale", links.params("lscale"))


@st.cache_data(max_entries=32, show_spinner=False)
def variance(d_ks: tuple[int, ...], seed: int) -> lesson.VarianceCurve:
    """Var(q.k) over the d_k grid, once per (grid, seed) for the whole server."""
    return lesson.variance_curve(d_ks, N_VAR, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def saturation(d_ks: tuple[int, ...], n_keys: int, seed: int) -> dict:
    """Softmax saturation over the d_k grid, once per (grid, keys, seed)."""
    return lesson.saturation_curves(d_ks, n_keys, seed, N_SAT)


def g(x: float) -> str:
    """Four significant digits."""
    return f"{x:.4g}"


def controls() -> None:
    """d_k, the number of keys, the seed and the scaling switch."""
    cols = st.columns([2, 2, 2, 1.5], vertical_alignment="bottom")
    number(PAGE, "dk", t("lesson_scaling.dk"), where=cols[0], help=t("lesson_scaling.dk_help"))
    number(PAGE, "keys", t("lesson_scaling.keys"), where=cols[1], help=t("lesson_scaling.keys_help"))
    number(PAGE, "seed", t("lesson_scaling.seed"), where=cols[2], help=t("lesson_scaling.seed_help"))
    toggle(PAGE, "scaled", t("lesson_scaling.scaled"), where=cols[3], help=t("lesson_scaling.scaled_help"))


def variance_section(grid: tuple[int, ...], dk: int, seed: int) -> None:
    """1. Var(q.k) grows like d_k; divided by sqrt(d_k) it stays near 1."""
    st.subheader(t("lesson_scaling.var_title"))
    st.markdown(t("lesson_scaling.var_body"))
    latex.show(
        r"\mathrm{Var}(q\cdot k) = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k, \qquad "
        r"\mathrm{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = 1"
    )
    curve = variance(grid, seed)
    at = grid.index(dk)
    m = st.columns(3)
    m[0].metric(
        t("lesson_scaling.var_metric", dk=dk),
        g(curve.var_raw[at]),
        help=t("lesson_scaling.var_metric_help", n=N_VAR, dk=dk, err=g(curve.std_err[at])),
    )
    m[1].metric(t("lesson_scaling.var_ratio"), f"{curve.var_raw[at] / dk:.3f}")
    m[2].metric(t("lesson_scaling.var_scaled_metric"), f"{curve.var_scaled[at]:.3f}")
    names = {key: t(f"lesson_scaling.var_{key}") for key in ("theory", "raw", "scaled", "y")}
    fig = variance_figure(
        curve.d_k, curve.var_raw, curve.std_err, curve.var_scaled, dk, names, t("lesson_scaling.var_chart", n=N_VAR)
    )
    chart(fig, key="lscale.var")


def saturation_section(grid: tuple[int, ...], dk: int, n_keys: int, seed: int) -> None:
    """2. Without the scaling the softmax saturates as d_k grows; with it, it does not."""
    st.subheader(t("lesson_scaling.sat_title"))
    st.markdown(t("lesson_scaling.sat_body", n=N_SAT, keys=n_keys))
    keys = {"max_weight": "sat_max", "entropy": "sat_entropy", "grad_norm": "sat_grad"}
    names = {name: t(f"lesson_scaling.{key}") for name, key in keys.items()}
    names |= {variant: t(f"lesson_scaling.sat_{variant}") for variant in ("unscaled", "scaled")}
    chart(saturation_figure(grid, saturation(grid, n_keys, seed), dk, names, n_keys), key="lscale.sat")


def one_query_section(dk: int, n_keys: int, scaled: bool, seed: int) -> None:
    """3. One query row at the user's d_k, scaled or not."""
    st.subheader(t("lesson_scaling.one_title"))
    st.markdown(t("lesson_scaling.one_body_scaled" if scaled else "lesson_scaling.one_body_unscaled"))
    one = lesson.one_query(dk, n_keys, scaled, seed)
    spread = one.logits.max() - one.logits.min()
    st.caption(t("lesson_scaling.one_scores", lo=g(one.logits.min()), hi=g(one.logits.max()), spread=g(spread)))
    m = st.columns(3)
    m[0].metric(t("lesson_scaling.one_max"), f"{one.weights.max():.4f}")
    m[1].metric(
        t("lesson_scaling.one_entropy"),
        f"{one.entropy:.4f}",
        help=t("lesson_scaling.one_entropy_help", max=f"{math.log(n_keys):.4f}"),
    )
    m[2].metric(t("lesson_scaling.one_grad"), f"{one.grad_norm:.4g}")
    variant = t("lesson_scaling.sat_scaled" if scaled else "lesson_scaling.sat_unscaled")
    key_names = [t("lesson_scaling.key_name", i=i + 1) for i in range(n_keys)]
    title = t("lesson_scaling.one_chart", keys=n_keys, variant=variant)
    chart(weights_bar(key_names, one.weights, title), key="lscale.one")
