"""The Benchmark page's sections: its URL state, the sweep's controls and configuration, the recorded runs."""

from dataclasses import dataclass

import streamlit as st

from attnlab import links
from attnlab.bench import DTYPES, BenchConfig
from attnlab.bench.headline import Headline
from attnlab.bench.results import RecordedRun, Skipped
from attnlab.params import Param, choice_param
from attnlab.ui.app import fold
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import multiselect, number, selectbox
from attnlab.ui.pages.benchmark import grid, modern
from attnlab.ui.pages.benchmark import results as ui
from attnlab.ui.pages.benchmark.upload import refusal

TIMING = dict(warmup=2, min_reps=5, max_reps=100, min_time_s=0.1, max_time_s=1.0)


@dataclass(frozen=True)
class Recorded:
    """The GPU result files in data/gpu/ and their headlines, looked up on every run (a file added there shows without
    a restart) and parsed once per change (`results.recorded_runs`)."""

    runs: list[RecordedRun]
    skipped: list[Skipped]
    headlines: list[Headline | None]

    @property
    def by_stem(self) -> dict[str, RecordedRun]:
        return {run.stem: run for run in self.runs}

    @property
    def dtypes(self) -> list[str]:
        """Every dtype some file measured, the headline's first."""
        held = [d for d in DTYPES if any(r.dtype == d for run in self.runs for r in run.results)]
        return grid.ordered("dtype", set(held)) or ["float32"]


def recorded_params(rec: Recorded) -> tuple[Param, ...]:
    """Which recorded file and dtype to show: only when some were recorded."""
    if not rec.runs:
        return ()
    stems = list(rec.by_stem)
    return (choice_param("rec", stems[0], stems), choice_param("rdtype", rec.dtypes[0], rec.dtypes))


def page_state() -> tuple[PageState, Recorded]:
    """This run's page state: the sweep's settings, and a choice among the recorded files when there are some."""
    rec = Recorded(*ui.recorded_runs())
    page = PageState(
        "bench",
        (
            *links.params("bench"),
            *recorded_params(rec),
        ),
    )
    return page, rec


def load(page: PageState) -> None:
    """The link's settings into the session once, read as contract 15 means them (see `modern.after_load`)."""
    modern.after_load(page, page.load())


def controls(page: PageState) -> None:
    """The two study presets, then dtype, sizes, mask, key/value heads, implementations and sequence lengths."""
    modern.presets(page)
    cols = st.columns([1.3, 1, 1, 1], vertical_alignment="bottom")
    selectbox(page, "dtype", t("benchmark.dtype"), where=cols[0])
    number(page, "heads", t("benchmark.heads"), where=cols[1], on_change=modern.fit_kv, args=(page,))
    number(page, "head_dim", t("benchmark.head_dim"), where=cols[2])
    number(page, "batch", t("benchmark.batch"), where=cols[3])
    modern.controls(page)
    multiselect(page, "impls", t("benchmark.impls"), help=t("benchmark.impls_help"))
    multiselect(page, "seq", t("benchmark.seq"), help=t("benchmark.seq_help"))
    page["causal"] = page["mask"] == "causal"  # kept in the link for older readers


def sweep_config(page: PageState, seq_lens: list[int], impls: list[str]) -> list[BenchConfig]:
    """The run the button starts: one config per key/value head count, on the GPU if there is one, one CPU thread
    otherwise, FlexAttention compiled where this server can. FlexAttention runs last (each key/value grouping costs
    it a compile), so a run cut short by the time budget still holds every other implementation's rows."""
    groups = [tuple(i for i in impls if i != "flex"), tuple(i for i in impls if i == "flex")]
    return [
        BenchConfig(
            device="auto",
            dtypes=(page["dtype"],),
            seq_lens=tuple(seq_lens),
            heads=page["heads"],
            head_dim=page["head_dim"],
            batch=page["batch"],
            kv_heads=kv,
            mask=modern.mask_spec(page),
            impls=group,
            threads=None if ui.on_gpu() else 1,
            **TIMING,
        )
        for group in groups
        if group
        for kv in sorted(page["kv_heads"], reverse=True)  # every head its own keys first, then fewer
    ]


def runnable_lengths(page: PageState, impls: list[str]) -> list[int]:
    """The chosen lengths this server accepts; the refused ones are named with what they would need."""
    seq_lens = sorted(page["seq"])
    shape = dict(kv_heads=page["kv_heads"], mask=modern.mask_spec(page))
    refused = ui.refusals(page["batch"], page["heads"], page["head_dim"], seq_lens, page["dtype"], impls, **shape)
    for message in refused.values():
        st.warning(message, icon=":material/block:")
    runnable = [s for s in seq_lens if s not in refused]
    if not impls or not seq_lens:
        st.info(t("benchmark.pick_some"), icon=":material/info:")
    elif not runnable:
        st.info(t("benchmark.all_refused"), icon=":material/info:")
    return runnable


def how_to_record() -> None:
    """No GPU results yet: say so, and give the command that records them."""
    st.info(t("benchmark.no_recorded"), icon=":material/info:")
    st.code("python -m attnlab.bench --preset record --out data/gpu/h100.json", language="bash")
    st.caption(t("benchmark.record_notebook", path=code("notebooks/gpu_benchmark.ipynb")))


def recorded_run(page: PageState, run: RecordedRun) -> None:
    """One recorded GPU file: its charts and table for the chosen dtype, then its long-context studies (whatever
    their dtype), each folded until opened (`fold.section`): sent with the headline, their five charts and table made
    the page's first chart 3.8 s later than a one-chart page's on a phone (issue 61)."""
    here = grid.ordered("dtype", {r.dtype for r in run.results})
    if page["rdtype"] not in here:  # a dtype another file has: this one's first
        page["rdtype"] = here[0]
    st.markdown(f"##### {code(run.label)}")
    st.caption(ui.env_caption(run.env, run.name))

    def dtype(where: object) -> None:
        selectbox(page, "rdtype", t("benchmark.dtype"), options=here, where=where)

    with fold.section(page, "grid", t("benchmark.recorded_grid"), icon=":material/table_chart:") as drawn:
        if drawn:
            rows = grid.pick(run.results, "bench.rec", fixed={"dtype": page["rdtype"]}, lead=dtype)
            ui.draw_results(rows, run.env, "bench.rec", with_downloads=False)
    with fold.section(page, "studies", t("benchmark.studies_title"), icon=":material/stacked_line_chart:") as drawn:
        if drawn:
            modern.studies(run.results, "bench.rec", recorded=True, heading=False)


def recorded(page: PageState, rec: Recorded) -> None:
    """Results recorded on real GPUs and shipped with the app (never invented)."""
    st.divider()
    st.subheader(t("benchmark.recorded_title"))
    for skipped in rec.skipped:
        st.warning(t("benchmark.recorded_skipped"), icon=":material/warning:")
        st.caption(refusal(skipped.name, skipped.error))
    if not rec.runs:
        how_to_record()
        return
    st.caption(t("benchmark.recorded_intro"))
    labels = {stem: run.label for stem, run in rec.by_stem.items()}
    selectbox(page, "rec", t("benchmark.recorded_pick"), labels=labels)
    recorded_run(page, rec.by_stem[page["rec"]])
