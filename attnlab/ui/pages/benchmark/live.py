"""The Benchmark page's live run: one timing sweep per server process at a time, watched by the session that began it.

Thirty visitors pressing Run together would each allocate up to the memory cap and time each other's contention,
so the server's one `BENCH` runner (`attnlab.live`) takes one sweep; another visitor is told a run is going and
about how long until theirs can start, with their settings left as they are. Each result's env says how busy the
machine was otherwise (`attnlab.bench.busy`), and the page says it beside the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st

from attnlab.bench import BenchConfig, ResultRow, sweep_documents, total_rows
from attnlab.limits import LIVE_BENCH_BUDGET_S
from attnlab.live import Progress, Runner
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import session_id
from attnlab.ui.app.text import code
from attnlab.ui.pages.benchmark import grid, modern
from attnlab.ui.pages.benchmark import results as ui


@dataclass(frozen=True)
class Sweep(Progress):
    """A live sweep's progress: rows done, and the whole document after the latest row."""

    doc: dict | None = None

    def add(self, step: int, doc: dict) -> Sweep:
        """One more row, and the document that now holds it."""
        return replace(self, steps=(*self.steps, step), doc=doc)


BENCH = Runner(LIVE_BENCH_BUDGET_S, "attnlab-live-bench", Sweep)  # one per server process, shared by every session
RESULT_KEY = "_bench.last_run"
BUSY_KEY = "_bench.busy"
ENDED_KEY = "_bench.ended"  # this session's last sweep: ("done", "budget" or "failed: <reason>", rows done, rows)
START_KEY = "_bench.start"  # set by the button's click; the sweep starts below it, with this run's settings
POLL_S = 1.0  # how often the session whose sweep is going redraws its progress


def run_button(make_configs: Callable[[], list[BenchConfig]], runnable: bool) -> None:
    """The Run button: start this session's sweep with the settings on screen now, or keep how long to wait."""
    if st.session_state.pop(START_KEY, False) and runnable:
        configs = make_configs()
        started = BENCH.start(session_id(), total_rows(configs), lambda: sweep_documents(configs))
        if not started and BENCH.snapshot().owner != session_id():  # a double click on one's own run says nothing
            st.session_state[BUSY_KEY] = BENCH.wait_s()
    p = BENCH.snapshot()
    mine = p.owner == session_id() and p.running
    st.button(
        t("benchmark.run"),
        type="primary",
        icon=":material/timer:",
        disabled=not runnable or mine,
        on_click=st.session_state.__setitem__,
        args=(START_KEY, True),
    )


def section() -> None:
    """The busy message, this session's sweep while it goes, then the last one it finished."""
    busy = st.session_state.pop(BUSY_KEY, None)
    p = BENCH.snapshot()
    mine = p.owner == session_id() and p.running
    if busy is not None:
        st.warning(
            t("benchmark.busy", seconds=busy, budget=round(LIVE_BENCH_BUDGET_S)), icon=":material/hourglass_top:"
        )
    elif p.running and not mine:
        st.info(t("benchmark.busy_now", seconds=BENCH.wait_s()), icon=":material/hourglass_top:")
    if mine:
        live()
        return
    if (ended := BENCH.take(session_id())) is not None:
        collect(ended)
    how_it_ended()
    this_run()


def collect(p: Sweep) -> None:
    """Keep this session's ended sweep: its last document (what it measured) and how it ended."""
    if p.doc:
        st.session_state[RESULT_KEY] = p.doc
    st.session_state[ENDED_KEY] = (p.ended, p.done, p.total)


def how_it_ended() -> None:
    """Say why this session's last sweep stopped early (an error, the time budget); nothing when it was done."""
    ended, done, total = st.session_state.get(ENDED_KEY, ("", 0, 0))
    if ended.startswith("failed"):
        st.error(t("benchmark.run_failed"), icon=":material/error:")
        st.caption(t("common.library_said", detail=code(ended.removeprefix("failed: "), 300)))
    elif ended == "budget":
        st.info(t("benchmark.run_budget", budget=round(LIVE_BENCH_BUDGET_S), done=done, total=total))


@st.fragment(run_every=POLL_S)
def live() -> None:
    """This session's sweep while it goes: redrawn every second; a full rerun once it ends stops the polling."""
    p = BENCH.snapshot()
    if not p.running:
        st.rerun()
    if not p.doc:
        st.progress(0.0, text=t("benchmark.starting", total=p.total))
        return
    doc = p.doc
    row = doc["results"][-1]
    text = t("benchmark.progress", done=p.done, total=p.total, impl=row["impl"], t=row["seq_len"])
    st.progress(min(p.done / max(p.total, 1), 1.0), text=text)
    load_line(doc["env"])


def load_line(env: dict) -> None:
    """How busy the machine was otherwise while this run timed (a caption; nothing for files that do not say)."""
    load = env.get("machine_load")
    if not load:
        return
    after = load.get("load_1m_after")
    fmt = dict(cores=load["cores"], load="?" if after is None else f"{after:.1f}")
    if load.get("other_busy_cores") is None:
        st.caption(t("benchmark.load_unknown", **fmt))
        return
    key = "benchmark.load_busy" if load["busy"] else "benchmark.load_quiet"
    st.caption(t(key, other=f"{load['other_busy_cores']:.1f}", **fmt))


def this_run() -> None:
    """The last sweep of this session, with where, how and on how busy a machine it was measured."""
    doc = st.session_state.get(RESULT_KEY)
    if not doc:
        st.caption(t("benchmark.not_run_yet"))
        return
    env, cfg = doc["env"], doc["env"]["config"]
    kv = sorted({c["kv_heads"] for c in env.get("configs", [cfg])}, reverse=True)
    st.subheader(t("benchmark.your_run"))
    st.caption(
        t(
            "benchmark.run_caption",
            device=code(env["device_name"]),
            torch=code(env["torch"]),
            threads=env["cpu_threads"],
            dtype=", ".join(cfg["dtypes"]),
            batch=cfg["batch"],
            heads=cfg["heads"],
            kv=", ".join(map(str, kv)),
            head_dim=cfg["head_dim"],
            mask=modern.mask_label(cfg["mask"]),
            date=env["date"][:19].replace("T", " "),
        )
    )
    load_line(env)
    rows = [ResultRow.from_dict(r) for r in doc["results"]]
    ui.draw_results(grid.pick(rows, "bench.run"), env, "bench.run")
    modern.studies(rows, "bench.run", recorded=False)
