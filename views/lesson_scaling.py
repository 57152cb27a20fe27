"""Lesson: why divide by sqrt(d_k). Var(q.k) measured over d_k = 1..512, softmax saturation with and without
the scaling, and one concrete query at the user's d_k."""

import math

import streamlit as st

from attnlab.figures_lessons import saturation_figure, variance_figure, weights_bar
from attnlab.lessons import scaling as lesson
from attnlab.limits import MAX_SEED
from attnlab.params import Param, boolean, dump_bool, int_in
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart

SCOPE = "lscale"
N_VAR = 4000
N_SAT = 300
PARAMS = (
    Param("dk", 64, int_in(1, lesson.MAX_DK, 64)),
    Param("keys", 8, int_in(2, 64, 8)),
    Param("scaled", True, boolean(True), dump_bool),
    Param("seed", 0, int_in(0, MAX_SEED, 0)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


@st.cache_data(max_entries=32, show_spinner=False)
def variance(d_ks: tuple[int, ...], seed: int) -> lesson.VarianceCurve:
    return lesson.variance_curve(d_ks, N_VAR, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def saturation(d_ks: tuple[int, ...], n_keys: int, seed: int) -> dict:
    return lesson.saturation_curves(d_ks, n_keys, seed)


def g(x: float) -> str:
    return f"{x:.4g}"


state.load(SCOPE, PARAMS)
st.title(t("lesson_scaling.title"))
st.caption(t("lesson_scaling.intro"))
state.show_problems(SCOPE)
cols = st.columns([2, 2, 2, 1.5], vertical_alignment="bottom")
cols[0].number_input(
    t("lesson_scaling.dk"),
    1,
    lesson.MAX_DK,
    step=1,
    key=K["dk"],
    help=t("lesson_scaling.dk_help"),
    persist_state="session",
)
cols[1].number_input(
    t("lesson_scaling.keys"), 2, 64, step=1, key=K["keys"], help=t("lesson_scaling.keys_help"), persist_state="session"
)
cols[2].number_input(
    t("lesson_scaling.seed"),
    0,
    MAX_SEED,
    step=1,
    key=K["seed"],
    help=t("lesson_scaling.seed_help"),
    persist_state="session",
)
cols[3].toggle(
    t("lesson_scaling.scaled"), key=K["scaled"], help=t("lesson_scaling.scaled_help"), persist_state="session"
)
state.save(SCOPE, PARAMS)
dk, n_keys, seed, scaled = (
    int(st.session_state[K["dk"]]),
    int(st.session_state[K["keys"]]),
    int(st.session_state[K["seed"]]),
    bool(st.session_state[K["scaled"]]),
)
grid = tuple(lesson.dk_grid(dk))
at = grid.index(dk)

# 1. variance ----------------------------------------------------------------------------------------
st.subheader(t("lesson_scaling.var_title"))
st.markdown(t("lesson_scaling.var_body"))
st.latex(
    r"\mathrm{Var}(q\cdot k) = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k, \qquad "
    r"\mathrm{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = 1"
)
curve = variance(grid, seed)
m = st.columns(3)
m[0].metric(
    t("lesson_scaling.var_metric", dk=dk),
    g(curve.var_raw[at]),
    help=t("lesson_scaling.var_metric_help", n=N_VAR, dk=dk, err=g(curve.std_err[at])),
)
m[1].metric(t("lesson_scaling.var_ratio"), f"{curve.var_raw[at] / dk:.3f}")
m[2].metric(t("lesson_scaling.var_scaled_metric"), f"{curve.var_scaled[at]:.3f}")
names = {
    "theory": t("lesson_scaling.var_theory"),
    "raw": t("lesson_scaling.var_raw"),
    "scaled": t("lesson_scaling.var_scaled"),
    "y": t("lesson_scaling.var_y"),
}
chart(
    variance_figure(
        curve.d_k, curve.var_raw, curve.std_err, curve.var_scaled, dk, names, t("lesson_scaling.var_chart", n=N_VAR)
    ),
    key="lscale.var",
)

# 2. saturation --------------------------------------------------------------------------------------
st.subheader(t("lesson_scaling.sat_title"))
st.markdown(t("lesson_scaling.sat_body", n=N_SAT, keys=n_keys))
sat_names = {
    "max_weight": t("lesson_scaling.sat_max"),
    "entropy": t("lesson_scaling.sat_entropy"),
    "grad_norm": t("lesson_scaling.sat_grad"),
    "unscaled": t("lesson_scaling.sat_unscaled"),
    "scaled": t("lesson_scaling.sat_scaled"),
}
chart(saturation_figure(grid, saturation(grid, n_keys, seed), dk, sat_names, n_keys), key="lscale.sat")

# 3. one query ---------------------------------------------------------------------------------------
st.subheader(t("lesson_scaling.one_title"))
st.markdown(t("lesson_scaling.one_body_scaled" if scaled else "lesson_scaling.one_body_unscaled"))
one = lesson.one_query(dk, n_keys, scaled, seed)
st.caption(
    t(
        "lesson_scaling.one_scores",
        lo=g(one.logits.min()),
        hi=g(one.logits.max()),
        spread=g(one.logits.max() - one.logits.min()),
    )
)
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
chart(
    weights_bar(key_names, one.weights, t("lesson_scaling.one_chart", keys=n_keys, variant=variant)), key="lscale.one"
)
