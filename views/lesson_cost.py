"""Lesson: cost. The explicit path timed live against T (log-log slope ~2), recorded GPU results when data/gpu/
has any (never invented), and an RNN against attention: T sequential steps and T - 1 hops against 1 and 1."""

import pandas as pd
import streamlit as st

from attnlab.figures_lessons import loglog_figure, rnn_figure
from attnlab.lessons import cost as lesson
from attnlab.params import Param, int_in
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape

SCOPE = "lcost"
LO, HI = lesson.MIN_LIVE_T, lesson.MAX_LIVE_T
PARAMS = (
    Param("t_min", 128, int_in(LO, HI, 128)),
    Param("t_max", 2048, int_in(LO, HI, 2048)),
    Param("d", 64, int_in(8, 128, 64)),
    Param("rec", 0, int_in(0, 999, 0)),
    Param("rnn_t", 512, int_in(2, 100_000, 512)),
    Param("rnn_d", 512, int_in(2, 4096, 512)),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}
AGAIN = "lcost._again"


@st.cache_data(max_entries=16, show_spinner=False)
def measure(lens: tuple[int, ...], head_dim: int, attempt: int) -> lesson.LiveRun:
    """Cached per (sizes, width, attempt): reruns reuse the numbers until the user asks to measure again."""
    return lesson.measure_live(list(lens), head_dim)


def slope_text(slope: float | None) -> str:
    return f"{slope:.2f}" if slope is not None else t("lesson_cost.slope_none")


state.load(SCOPE, PARAMS)
st.title(t("lesson_cost.title"))
st.caption(t("lesson_cost.intro"))
state.show_problems(SCOPE)

# 1. live --------------------------------------------------------------------------------------------
st.subheader(t("lesson_cost.live_title"))
st.markdown(t("lesson_cost.live_body"))
st.latex(
    r"\text{time} \propto T^2 d, \qquad \text{memory} \propto T^2 \quad\Longrightarrow\quad "
    r"\log y = a + 2 \log T"
)
cols = st.columns([2, 2, 2, 1.3], vertical_alignment="bottom")
cols[0].number_input(
    t("lesson_cost.t_min"),
    LO,
    HI,
    step=16,
    key=K["t_min"],
    help=t("lesson_cost.t_help", lo=LO, hi=HI),
    persist_state="session",
)
cols[1].number_input(
    t("lesson_cost.t_max"),
    LO,
    HI,
    step=16,
    key=K["t_max"],
    help=t("lesson_cost.t_help", lo=LO, hi=HI),
    persist_state="session",
)
cols[2].number_input(
    t("lesson_cost.head_dim"), 8, 128, step=8, key=K["d"], help=t("lesson_cost.head_dim_help"), persist_state="session"
)
if cols[3].button(t("lesson_cost.again"), icon=":material/refresh:"):
    st.session_state[AGAIN] = st.session_state.get(AGAIN, 0) + 1
t_min, t_max = int(st.session_state[K["t_min"]]), int(st.session_state[K["t_max"]])
if t_min > t_max:
    st.info(t("lesson_cost.swapped"), icon=":material/swap_vert:")
    t_min, t_max = t_max, t_min
lens = tuple(lesson.seq_lens(t_min, t_max))
run = measure(lens, int(st.session_state[K["d"]]), st.session_state.get(AGAIN, 0))
ts = [p.seq_len for p in run.points]
ms = [p.median_ms for p in run.points]
mem = [p.bytes for p in run.points]
time_slope, mem_slope = lesson.loglog_slope(ts, ms), lesson.loglog_slope(ts, mem)
m = st.columns(3)
m[0].metric(t("lesson_cost.slope_time"), slope_text(time_slope), help=t("lesson_cost.slope_help", n=len(ts)))
m[1].metric(t("lesson_cost.slope_mem"), slope_text(mem_slope), help=t("lesson_cost.slope_help", n=len(ts)))
m[2].metric(t("lesson_cost.spent"), f"{run.seconds:.2f} s")
if run.skipped:
    st.warning(
        t("lesson_cost.skipped", budget=lesson.LIVE_BUDGET_S, lens=", ".join(map(str, run.skipped))),
        icon=":material/timer_off:",
    )
left, right = st.columns(2)
with left:
    chart(
        loglog_figure(
            [(t("lesson_cost.series_live_time"), ts, ms, time_slope)],
            t("lesson_cost.x_t"),
            t("lesson_cost.y_ms"),
            t("lesson_cost.time_chart"),
        ),
        key="lcost.chart.time",
    )
with right:
    chart(
        loglog_figure(
            [(t("lesson_cost.series_live_mem"), ts, mem, mem_slope)],
            t("lesson_cost.x_t"),
            t("lesson_cost.y_bytes"),
            t("lesson_cost.mem_chart"),
        ),
        key="lcost.chart.mem",
    )
st.caption(t("lesson_cost.live_note", hi=HI))
st.dataframe(
    pd.DataFrame(
        {
            t("lesson_cost.col_t"): ts,
            t("lesson_cost.col_median"): [round(p.median_ms, 4) for p in run.points],
            t("lesson_cost.col_p20"): [round(p.p20_ms, 4) for p in run.points],
            t("lesson_cost.col_p80"): [round(p.p80_ms, 4) for p in run.points],
            t("lesson_cost.col_reps"): [p.reps for p in run.points],
            t("lesson_cost.col_mem"): [round(p.bytes / 2**20, 3) for p in run.points],
        }
    ),
    hide_index=True,
    width="stretch",
)

# 2. recorded GPU results ----------------------------------------------------------------------------
st.subheader(t("lesson_cost.gpu_title"))
st.markdown(t("lesson_cost.gpu_body"))
series, skipped = lesson.recorded_series()  # a few small JSON files: read on each run, never stale
if skipped:
    st.warning(t("lesson_cost.gpu_skipped", items=md_escape("; ".join(skipped))), icon=":material/warning:")
configs: list[tuple] = []
for s in series:
    cfg = (s.label, s.dtype, s.batch, s.heads, s.head_dim, s.causal)
    if cfg not in configs:
        configs.append(cfg)
if not configs:
    st.info(t("lesson_cost.gpu_none"), icon=":material/info:")
else:
    if st.session_state[K["rec"]] >= len(configs):
        st.session_state[K["rec"]] = 0
    names = {
        i: t(
            "lesson_cost.config_label",
            label=c[0],
            dtype=c[1],
            batch=c[2],
            heads=c[3],
            head_dim=c[4],
            causal=t("lesson_cost.causal_suffix") if c[5] else "",
        )
        for i, c in enumerate(configs)
    }
    st.selectbox(t("lesson_cost.gpu_pick"), list(names), key=K["rec"], format_func=names.get, persist_state="session")
    cfg = configs[st.session_state[K["rec"]]]
    chosen = [s for s in series if (s.label, s.dtype, s.batch, s.heads, s.head_dim, s.causal) == cfg]
    left, right = st.columns(2)
    with left:
        chart(
            loglog_figure(
                [(s.impl, s.seq_len, s.median_ms, s.time_slope) for s in chosen],
                t("lesson_cost.x_t"),
                t("lesson_cost.y_ms"),
                t("lesson_cost.gpu_time_chart", label=cfg[0]),
            ),
            key="lcost.chart.gpu_time",
        )
    with right:
        with_mem = [s for s in chosen if s.mem_slope is not None]
        if with_mem:
            chart(
                loglog_figure(
                    [(s.impl, s.seq_len, s.peak_mem_bytes, s.mem_slope) for s in with_mem],
                    t("lesson_cost.x_t"),
                    t("lesson_cost.y_bytes"),
                    t("lesson_cost.gpu_mem_chart", label=cfg[0]),
                ),
                key="lcost.chart.gpu_mem",
            )
        else:
            st.info(t("lesson_cost.gpu_no_mem"), icon=":material/info:")

# 3. RNN vs attention --------------------------------------------------------------------------------
st.subheader(t("lesson_cost.rnn_title"))
st.markdown(t("lesson_cost.rnn_body"))
cols = st.columns(2)
cols[0].number_input(
    t("lesson_cost.rnn_t"),
    2,
    100_000,
    step=1,
    key=K["rnn_t"],
    help=t("lesson_cost.rnn_t_help"),
    persist_state="session",
)
cols[1].number_input(
    t("lesson_cost.rnn_d"), 2, 4096, step=1, key=K["rnn_d"], help=t("lesson_cost.rnn_d_help"), persist_state="session"
)
state.save(SCOPE, PARAMS)
rnn_t, rnn_d = int(st.session_state[K["rnn_t"]]), int(st.session_state[K["rnn_d"]])
r = lesson.rnn_vs_attention(rnn_t, rnn_d)
st.dataframe(
    pd.DataFrame(
        {
            t("lesson_cost.rnn_name"): [str(r.rnn_steps), str(r.rnn_path), f"{r.rnn_flops:.3g}"],
            t("lesson_cost.attn_name"): [str(r.attn_steps), str(r.attn_path), f"{r.attn_flops:.3g}"],
        },
        index=[t("lesson_cost.rnn_steps"), t("lesson_cost.rnn_path"), t("lesson_cost.rnn_flops")],
    ),
    width="stretch",
)
names = {
    "steps_title": t("lesson_cost.rnn_chart_steps"),
    "flops_title": t("lesson_cost.rnn_chart_flops"),
    "rnn": t("lesson_cost.rnn_name"),
    "attn": t("lesson_cost.attn_name"),
}
chart(rnn_figure(max(rnn_t * 4, 64), rnn_t, names, rnn_d), key="lcost.chart.rnn")
st.caption(
    t("lesson_cost.rnn_crossover", t=rnn_t, d=rnn_d, factor=f"{r.attn_flops / r.rnn_flops:.3g}", even=f"{rnn_d / 2:g}")
)
