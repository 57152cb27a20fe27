"""The RoPE lesson's sections: one pair turning, every pair's speed, the shift that changes no score, the decay."""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from attnlab import links
from attnlab.figures import grid_figure
from attnlab.figures.rope import decay_figure, frequency_figure, pair_plane
from attnlab.lessons import rope as lesson
from attnlab.limits import MAX_ROPE_D, MAX_ROPE_DIST, MAX_ROPE_POS, MAX_ROPE_SHIFT
from attnlab.params import dump_float, next_even
from attnlab.positions import pairs
from attnlab.ui.app import latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, number, segmented, selectbox, slider

PAGE = PageState("lrope", links.params("lrope"))


@dataclass(frozen=True)
class Settings:
    """What every section computes with: the width and base actually used, the layout, the seed."""

    d: int
    base: float
    interleaved: bool
    seed: int

    @property
    def base_text(self) -> str:
        """The base as the URL writes it: 10000, 500000, 1.5."""
        return dump_float(self.base)


@st.cache_data(max_entries=64, show_spinner=False)
def decay(d: int, base: float, max_dist: int, seed: int, interleaved: bool) -> lesson.Decay:
    """The decay curves, once per setting for the whole server (numbers only)."""
    return lesson.decay(d, base, max_dist, seed, interleaved)


def g(x: float, digits: int = 4) -> str:
    """A number to `digits` significant digits."""
    return f"{x:.{digits}g}"


def load() -> None:
    """The link's values (an odd d or a base not above 1 replaced and said), then a pair that must exist at d."""
    if PAGE.load():  # d is even here: its Param replaced an odd one
        PAGE.rebound("pair", PAGE["d"] // 2 - 1)
    PAGE.show_problems()


def controls() -> Settings:
    """d, base, the pairing and the seed; a typed odd d or a base not above 1 is kept in its box and replaced here."""
    cols = st.columns([1, 1, 2.2, 1], vertical_alignment="bottom")
    number(PAGE, "d", t("lesson_rope.d"), where=cols[0], step=2, help=t("lesson_rope.d_help", hi=MAX_ROPE_D))
    hi = dump_float(PAGE.params["base"].hi)
    number(
        PAGE,
        "base",
        t("lesson_rope.base"),
        where=cols[1],
        step=1000.0,
        format="%g",
        help=t("lesson_rope.base_help", hi=hi),
    )
    labels = {name: t(f"lesson_rope.layout_{name}") for name in PAGE.params["layout"].options}
    segmented(PAGE, "layout", t("lesson_rope.layout"), where=cols[2], labels=labels, help=t("lesson_rope.layout_help"))
    number(PAGE, "seed", t("lesson_rope.seed"), where=cols[3], help=t("lesson_rope.seed_help"))
    d, base = PAGE["d"], PAGE["base"]
    if d % 2:
        d = next_even(d, MAX_ROPE_D)
        st.info(t("lesson_rope.odd_d", asked=code(PAGE["d"]), used=code(d)), icon=":material/straighten:")
    if not base > 1.0:
        base = PAGE.params["base"].default
        st.info(
            t("lesson_rope.low_base", asked=code(dump_float(PAGE["base"])), used=code(dump_float(base))),
            icon=":material/block:",
        )
    return Settings(d, base, PAGE["layout"] == "interleaved", PAGE["seed"])


def pair_section(s: Settings) -> None:
    """1. One pair of q turning with the position, on a plane."""
    st.subheader(t("lesson_rope.pair_title"))
    st.markdown(t("lesson_rope.pair_body"))
    latex.show(
        r"\begin{pmatrix} x'_a \\ x'_b \end{pmatrix} = \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\ "
        r"\sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} x_a \\ x_b \end{pmatrix}, \qquad "
        r"\theta_i = \mathrm{base}^{-2i/d}"
    )
    layout = pairs(s.d, s.interleaved)
    if PAGE["pair"] >= len(layout):  # d went down since the pair was picked
        PAGE["pair"] = len(layout) - 1
    cols = st.columns([1, 2])
    labels = {i: t("lesson_rope.pair_option", i=i, a=a, b=b) for i, (a, b) in enumerate(layout)}
    selectbox(
        PAGE,
        "pair",
        t("lesson_rope.pair"),
        where=cols[0],
        options=list(labels),
        labels=labels,
        help=t("lesson_rope.pair_help"),
    )
    slider(PAGE, "pos", t("lesson_rope.pos"), where=cols[1], help=t("lesson_rope.pos_help", hi=MAX_ROPE_POS))
    turn = lesson.pair_turn(s.d, s.base, PAGE["pair"], PAGE["pos"], s.seed, s.interleaved)
    (a, b), i, p = turn.dims, turn.pair, turn.pos
    m = st.columns(4)
    m[0].metric(t("lesson_rope.theta_metric", i=i), g(turn.theta, 6))
    full, rest = divmod(turn.angle, 2 * math.pi)
    angle = t("lesson_rope.angle_help", deg=f"{math.degrees(rest):.1f}", turns=int(full))
    m[1].metric(t("lesson_rope.angle_metric", i=i), t("lesson_rope.angle_value", rad=g(turn.angle)), help=angle)
    m[2].metric(t("lesson_rope.wavelength_metric"), t("lesson_rope.wavelength_value", w=g(turn.wavelength)))
    length = float(math.hypot(*turn.now))
    m[3].metric(t("lesson_rope.length_metric"), g(length, 6), help=t("lesson_rope.length_help"))
    names = {key: t(f"lesson_rope.{key}") for key in ("trail", "start", "position")}
    names |= {"now": t("lesson_rope.now", p=p), "x": f"d{a}", "y": f"d{b}"}
    title = t("lesson_rope.plane_chart", i=i, a=a, b=b, p=p)
    chart(pair_plane(turn.trail, turn.positions, names, title), key="lrope.plane")


def frequency_section(s: Settings) -> None:
    """2. theta_i and the wavelength of every pair, with the worked numbers at the page's settings."""
    st.subheader(t("lesson_rope.freq_title"))
    st.markdown(t("lesson_rope.freq_body"))
    latex.show(
        r"\theta_i = \mathrm{base}^{-2i/d}, \qquad \lambda_i = \frac{2\pi}{\theta_i}, \qquad i = 0, \dots, d/2 - 1"
    )
    f = lesson.pair_frequencies(s.d, s.base)
    names = {
        "theta": t("lesson_rope.theta"),
        "wavelength": t("lesson_rope.wavelength"),
        "pair": t("lesson_rope.pair_axis"),
    }
    chart(frequency_figure(f.theta, f.wavelength, min(PAGE["pair"], s.d // 2 - 1), names), key="lrope.freq")
    one = min(1, len(f.theta) - 1)
    st.caption(
        t(
            "lesson_rope.freq_example",
            base=s.base_text,
            d=s.d,
            t1=g(f.theta[one], 6),
            w1=g(f.wavelength[one], 6),
            last=len(f.theta) - 1,
            tl=g(f.theta[-1], 6),
            wl=g(f.wavelength[-1], 6),
        )
    )


def shift_section(s: Settings) -> None:
    """3. Every position moved by the same amount: the scores stay; the other pairing changes them."""
    n, last = lesson.N_TOKENS, lesson.N_TOKENS - 1
    st.subheader(t("lesson_rope.shift_title"))
    st.markdown(t("lesson_rope.shift_body", n=n, last=last))
    latex.chain(r"(R_{m+s}\,q)^\top (R_{n+s}\,k)", r"q^\top R_{m+s}^\top R_{n+s}\,k", r"q^\top R_{n-m}\,k")
    slider(PAGE, "shift", t("lesson_rope.shift"), help=t("lesson_rope.shift_help", hi=MAX_ROPE_SHIFT))
    check = lesson.shift_check(s.d, s.base, s.seed, PAGE["shift"], s.interleaved)
    titles = [
        t("lesson_rope.before", last=last),
        t("lesson_rope.after", a=check.shift, b=check.shift + last),
        t("lesson_rope.other", last=last),
    ]
    tokens = [t("lesson_rope.token", i=i) for i in range(n)]
    axes = dict(row_name=t("lesson_rope.query"), col_name=t("lesson_rope.key"))
    st.markdown(f"**{t('lesson_rope.scores_chart')}**")
    chart(grid_figure([check.before, check.after, check.other], titles, tokens, tokens, **axes), key="lrope.scores")
    m = st.columns(3)
    m[0].metric(t("lesson_rope.shift_metric"), g(check.max_diff, 3), help=t("lesson_rope.shift_help_metric", n=n))
    m[1].metric(t("lesson_rope.layouts_metric"), g(check.layouts_diff, 3), help=t("lesson_rope.layouts_help_metric"))
    m[2].metric(t("lesson_rope.permuted_metric"), g(check.permuted_diff, 3), help=t("lesson_rope.permuted_help_metric"))
    said = t("lesson_rope.layouts_warning", diff=g(check.layouts_diff, 3), perm=g(check.permuted_diff, 3))
    st.warning(said, icon=":material/swap_horiz:")


def decay_section(s: Settings) -> None:
    """4. RoFormer's bound and a vector scored against itself, against the relative distance."""
    st.subheader(t("lesson_rope.decay_title"))
    st.markdown(t("lesson_rope.decay_body", samples=lesson.N_SAMPLES))
    latex.show(
        r"\left|q_m^\top k_n\right| \le \max_i |h_{i+1} - h_i| \sum_{j=1}^{d/2} |S_j|, \qquad "
        r"S_j = \sum_{k=0}^{j-1} e^{\,\mathrm{i}\,(m-n)\,\theta_k}"
    )
    number(PAGE, "dist", t("lesson_rope.dist"), help=t("lesson_rope.dist_help", hi=MAX_ROPE_DIST))
    found = decay(s.d, s.base, PAGE["dist"], s.seed, s.interleaved)
    r = int(found.distances[-1])
    m = st.columns(3)
    m[0].metric(t("lesson_rope.bound_zero"), g(found.bound_at_0), help=t("lesson_rope.bound_zero_help"))
    m[1].metric(t("lesson_rope.bound_far", r=r), g(found.bound[-1], 3))
    m[2].metric(t("lesson_rope.same_far", r=r), g(found.same[-1], 3))
    names = {key: t(f"lesson_rope.{key}") for key in ("bound", "same")} | {
        "x": t("lesson_rope.distance"),
        "y": t("lesson_rope.ratio"),
    }
    title = t("lesson_rope.decay_chart", d=s.d, base=s.base_text)
    chart(decay_figure(found.distances, {"bound": found.bound, "same": found.same}, names, title), key="lrope.decay")
