"""The cost lesson's sections: the live timing against T with its slopes, recorded GPU runs, RNN against attention."""

import pandas as pd
import streamlit as st

from attnlab import links
from attnlab.figures.lessons import rnn_figure
from attnlab.figures.lines import loglog_figure
from attnlab.fit import loglog_slope
from attnlab.lessons import cost as lesson
from attnlab.limits import COST_LIVE_BUDGET_S, MAX_COST_T, MIN_COST_T
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code, markdown_table
from attnlab.ui.app.widgets import chart, number, selectbox

LO, HI = MIN_COST_T, MAX_COST_T
PAGE = PageState("lcost", links.params("lcost"))
AGAIN = "lcost._again"
HALF = 0.5  # the charts drawn two to a row: each title is wrapped to half the page


@st.cache_data(max_entries=16, show_spinner=False)
def measure(lens: tuple[int, ...], head_dim: int, attempt: int) -> lesson.LiveRun:
    """Cached per (sizes, width, attempt): reruns reuse the numbers until the user asks to measure again."""
    return lesson.measure_live(list(lens), head_dim)


def slope_text(slope: float | None) -> str:
    """A fitted slope, or a dash when fewer than two sizes were measured."""
    return f"{slope:.2f}" if slope is not None else t("lesson_cost.slope_none")


def live_controls() -> tuple[int, int]:
    """The range of T and the head width; returns (t_min, t_max) in order (swapped and said if reversed)."""
    cols = st.columns([2, 2, 2, 1.8], vertical_alignment="bottom")  # "Measure" whole beside the sizes at 1024 px
    help_t = t("lesson_cost.t_help", lo=LO, hi=HI)
    number(PAGE, "t_min", t("lesson_cost.t_min"), where=cols[0], step=16, help=help_t)
    number(PAGE, "t_max", t("lesson_cost.t_max"), where=cols[1], step=16, help=help_t)
    number(PAGE, "d", t("lesson_cost.head_dim"), where=cols[2], step=8, help=t("lesson_cost.head_dim_help"))
    if cols[3].button(t("lesson_cost.again"), icon=":material/refresh:"):
        st.session_state[AGAIN] = st.session_state.get(AGAIN, 0) + 1
    t_min, t_max = PAGE["t_min"], PAGE["t_max"]
    if t_min > t_max:
        st.info(t("lesson_cost.swapped"), icon=":material/swap_vert:")
    return min(t_min, t_max), max(t_min, t_max)


def live_charts(run: lesson.LiveRun, time_slope: float | None, mem_slope: float | None) -> None:
    """Time and memory against T on log-log axes, each with its fitted slope."""
    ts = [p.seq_len for p in run.points]
    word, x = t("common.slope"), t("lesson_cost.x_t")
    left, right = st.columns(2)
    with left:
        series = [(t("lesson_cost.series_live_time"), ts, [p.median_ms for p in run.points], time_slope)]
        fig = loglog_figure(series, x, t("lesson_cost.y_ms"), t("lesson_cost.time_chart"), word, share=HALF)
        chart(fig, "lcost.chart.time")
    with right:
        series = [(t("lesson_cost.series_live_mem"), ts, [p.bytes for p in run.points], mem_slope)]
        fig = loglog_figure(series, x, t("lesson_cost.y_bytes"), t("lesson_cost.mem_chart"), word, share=HALF)
        chart(fig, "lcost.chart.mem")


def live_table(run: lesson.LiveRun) -> None:
    """Every measured T with its median, p20/p80, repetitions and bytes, folded until opened (`fold.section`): six
    columns are too wide for a phone as markdown, and a data grid's scripts cost a phone more than a chart."""
    with fold.section(PAGE, "table", t("lesson_cost.table_title"), icon=":material/table:") as drawn:
        if drawn:
            numbers(run)


def numbers(run: lesson.LiveRun) -> None:
    """The live run's numbers as a table."""
    columns = {
        "col_t": [p.seq_len for p in run.points],
        "col_median": [round(p.median_ms, 4) for p in run.points],
        "col_p20": [round(p.p20_ms, 4) for p in run.points],
        "col_p80": [round(p.p80_ms, 4) for p in run.points],
        "col_reps": [p.reps for p in run.points],
        "col_mem": [round(p.bytes / 2**20, 3) for p in run.points],
    }
    frame = pd.DataFrame({t(f"lesson_cost.{key}"): values for key, values in columns.items()})
    st.dataframe(frame, hide_index=True, width="stretch")


def live_section() -> None:
    """1. The explicit path timed here and now, with its log-log slopes."""
    st.subheader(t("lesson_cost.live_title"))
    st.markdown(t("lesson_cost.live_body"))
    latex.show(
        rf"{latex.words(t('lesson_cost.tex_time'))} \propto T^2 d, \qquad "
        rf"{latex.words(t('lesson_cost.tex_memory'))} \propto T^2 \quad\Longrightarrow\quad "
        r"\log y = a + 2 \log T"
    )
    t_min, t_max = live_controls()
    run = measure(tuple(lesson.seq_lens(t_min, t_max)), PAGE["d"], st.session_state.get(AGAIN, 0))
    ts = [p.seq_len for p in run.points]
    time_slope = loglog_slope(ts, [p.median_ms for p in run.points])
    mem_slope = loglog_slope(ts, [p.bytes for p in run.points])
    m = st.columns(3)
    help_slope = t("lesson_cost.slope_help", n=len(ts))
    m[0].metric(t("lesson_cost.slope_time"), slope_text(time_slope), help=help_slope)
    m[1].metric(t("lesson_cost.slope_mem"), slope_text(mem_slope), help=help_slope)
    m[2].metric(t("lesson_cost.spent"), f"{run.seconds:.2f} s")
    if run.skipped:
        lens = ", ".join(map(str, run.skipped))
        st.warning(t("lesson_cost.skipped", budget=COST_LIVE_BUDGET_S, lens=lens), icon=":material/timer_off:")
    live_charts(run, time_slope, mem_slope)
    st.caption(t("lesson_cost.live_note", hi=HI))
    live_table(run)


def config_label(s: lesson.RecordedSeries) -> str:
    """A recorded configuration as the picker names it."""
    causal = t("lesson_cost.causal_suffix") if s.causal else ""
    return t(
        "lesson_cost.config_label",
        label=s.label,
        dtype=s.dtype,
        batch=s.batch,
        heads=s.heads,
        head_dim=s.head_dim,
        causal=causal,
    )


def recorded_charts(chosen: list[lesson.RecordedSeries], label: str) -> None:
    """Time and memory against T for every implementation of one recorded configuration."""
    word, x = t("common.slope"), t("lesson_cost.x_t")
    left, right = st.columns(2)
    with left:
        series = [(s.impl, s.seq_len, s.median_ms, s.time_slope) for s in chosen]
        title = t("lesson_cost.gpu_time_chart", label=label)
        chart(loglog_figure(series, x, t("lesson_cost.y_ms"), title, word, share=HALF), "lcost.chart.gpu_time")
    with right:
        with_mem = [(s.impl, s.seq_len, s.peak_mem_bytes, s.mem_slope) for s in chosen if s.mem_slope is not None]
        if with_mem:
            title = t("lesson_cost.gpu_mem_chart", label=label)
            fig = loglog_figure(with_mem, x, t("lesson_cost.y_bytes"), title, word, share=HALF)
            chart(fig, "lcost.chart.gpu_mem")
        else:
            st.info(t("lesson_cost.gpu_no_mem"), icon=":material/info:")


def recorded_section() -> None:
    """2. Results recorded on real GPUs, when data/gpu/ has any (never invented)."""
    st.subheader(t("lesson_cost.gpu_title"))
    st.markdown(t("lesson_cost.gpu_body"))
    series, skipped = lesson.recorded_series()  # a few small JSON files: read on each run, never stale
    if skipped:
        st.warning(t("lesson_cost.gpu_skipped"), icon=":material/warning:")
        for line in skipped:
            st.caption(code(line, 300))
    configs = list(dict.fromkeys(config_label(s) for s in series))
    if not configs:
        st.info(t("lesson_cost.gpu_none"), icon=":material/info:")
        return
    if PAGE["rec"] >= len(configs):
        PAGE["rec"] = 0
    labels = dict(enumerate(configs))
    selectbox(PAGE, "rec", t("lesson_cost.gpu_pick"), options=list(labels), labels=labels)
    chosen = [s for s in series if config_label(s) == configs[PAGE["rec"]]]
    recorded_charts(chosen, chosen[0].label)


def rnn_section() -> None:
    """3. An RNN against attention: sequential steps, path length, and the work each does."""
    st.subheader(t("lesson_cost.rnn_title"))
    st.markdown(t("lesson_cost.rnn_body"))
    cols = st.columns(2)
    number(PAGE, "rnn_t", t("lesson_cost.rnn_t"), where=cols[0], help=t("lesson_cost.rnn_t_help"))
    number(PAGE, "rnn_d", t("lesson_cost.rnn_d"), where=cols[1], help=t("lesson_cost.rnn_d_help"))
    rnn_t, rnn_d = PAGE["rnn_t"], PAGE["rnn_d"]
    r = lesson.rnn_vs_attention(rnn_t, rnn_d)
    header = ("", t("lesson_cost.rnn_name"), t("lesson_cost.attn_name"))
    rows = [
        (t("lesson_cost.rnn_steps"), str(r.rnn_steps), str(r.attn_steps)),
        (t("lesson_cost.rnn_path"), str(r.rnn_path), str(r.attn_path)),
        (t("lesson_cost.rnn_flops"), f"{r.rnn_flops:.3g}", f"{r.attn_flops:.3g}"),
    ]
    st.markdown(markdown_table(header, rows))  # markdown, not a data grid (see `live_table`)
    names = {
        "steps_title": t("lesson_cost.rnn_chart_steps"),
        "flops_title": t("lesson_cost.rnn_chart_flops"),
        "rnn": t("lesson_cost.rnn_name"),
        "attn": t("lesson_cost.attn_name"),
    }
    chart(rnn_figure(max(rnn_t * 4, 64), rnn_t, names, rnn_d), key="lcost.chart.rnn")
    factor = f"{r.attn_flops / r.rnn_flops:.3g}"
    st.caption(t("lesson_cost.rnn_crossover", t=rnn_t, d=rnn_d, factor=factor, even=f"{rnn_d / 2:g}"))
