"""Benchmark: time attnlab's explicit and tiled attention against PyTorch's kernels on this server's device,
and show the results recorded on a real GPU (data/gpu/*.json). Only measured numbers are drawn."""

import streamlit as st

from attnlab.bench import DTYPES, IMPLS, BenchConfig, run_benchmark
from attnlab.params import Invalid, Param, boolean, choice, dump_bool, int_in
from attnlab.ui import bench as ui
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import keep_choice, md_escape

SCOPE = "bench"
RESULT_KEY = "_bench.last_run"
DEFAULT_IMPLS = ["explicit", "tiled", "sdpa", "sdpa-math", "sdpa-flash"]
DEFAULT_SEQ = [64, 128, 256, 512]
TIMING = dict(warmup=2, min_reps=5, max_reps=100, min_time_s=0.1, max_time_s=1.0)


def recorded_params(stems: list[str], dtypes: list[str]) -> tuple[Param, ...]:
    """URL parameters for which recorded file and dtype to show (only when some were recorded)."""
    if not stems:
        return ()

    def parse_rec(raw: str) -> str:
        if raw in stems:
            return raw
        raise Invalid("not_choice", stems[0], options=", ".join(stems))

    return (Param("rec", stems[0], parse_rec), Param("rdtype", dtypes[0], choice(tuple(dtypes), dtypes[0])))


runs, skipped = ui.recorded_runs()
by_stem = {run.path.stem: run for run in runs}
rec_dtypes = [d for d in DTYPES if any(r["dtype"] == d for run in runs for r in run.results)] or ["float32"]
PARAMS = (
    Param("dtype", "float32", choice(tuple(DTYPES), "float32")),
    Param("heads", 4, int_in(1, 64, 4)),
    Param("head_dim", 64, int_in(1, 256, 64)),
    Param("batch", 1, int_in(1, 16, 1)),
    Param("causal", False, boolean(False), dump_bool),
    Param("impls", DEFAULT_IMPLS, ui.list_of(IMPLS, DEFAULT_IMPLS), ui.dump_list),
    Param("seq", DEFAULT_SEQ, ui.list_of(ui.SEQ_OPTIONS, DEFAULT_SEQ, int), ui.dump_list),
    *recorded_params(list(by_stem), rec_dtypes),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}

state.load(SCOPE, PARAMS)
st.title(t("benchmark.title"))
st.caption(t("benchmark.intro"))
state.show_problems(SCOPE)
ui.device_line(st.session_state[K["dtype"]])

cols = st.columns([1.3, 1, 1, 1, 1], vertical_alignment="bottom")
keep_choice(K["dtype"], tuple(DTYPES), "float32")
cols[0].selectbox(t("benchmark.dtype"), tuple(DTYPES), key=K["dtype"], persist_state="session")
cols[1].number_input(t("benchmark.heads"), 1, 64, step=1, key=K["heads"], persist_state="session")
cols[2].number_input(t("benchmark.head_dim"), 1, 256, step=1, key=K["head_dim"], persist_state="session")
cols[3].number_input(t("benchmark.batch"), 1, 16, step=1, key=K["batch"], persist_state="session")
cols[4].toggle(t("benchmark.causal"), key=K["causal"], persist_state="session")
st.multiselect(t("benchmark.impls"), IMPLS, key=K["impls"], help=t("benchmark.impls_help"), persist_state="session")
st.multiselect(t("benchmark.seq"), ui.SEQ_OPTIONS, key=K["seq"], help=t("benchmark.seq_help"), persist_state="session")
state.save(SCOPE, PARAMS)

dtype = st.session_state[K["dtype"]]
heads, head_dim, batch = (int(st.session_state[K[n]]) for n in ("heads", "head_dim", "batch"))
causal = bool(st.session_state[K["causal"]])
impls = [i for i in IMPLS if i in st.session_state[K["impls"]]]
seq_lens = sorted(int(s) for s in st.session_state[K["seq"]])

refused = ui.refusals(batch, heads, seq_lens, dtype, impls)
for message in refused.values():
    st.warning(message, icon=":material/block:")
runnable = [s for s in seq_lens if s not in refused]
if not impls or not seq_lens:
    st.info(t("benchmark.pick_some"), icon=":material/info:")
elif not runnable:
    st.info(t("benchmark.all_refused"), icon=":material/info:")

if st.button(t("benchmark.run"), type="primary", icon=":material/timer:", disabled=not (impls and runnable)):
    config = BenchConfig(
        device="auto",
        dtypes=(dtype,),
        seq_lens=tuple(runnable),
        heads=heads,
        head_dim=head_dim,
        batch=batch,
        causal=causal,
        impls=tuple(impls),
        threads=None if ui.on_gpu() else 1,
        **TIMING,
    )
    bar = st.progress(0.0, text=t("benchmark.starting", total=config.total))

    def on_progress(done: int, total: int, row: dict) -> None:
        bar.progress(
            done / total, text=t("benchmark.progress", done=done, total=total, impl=row["impl"], t=row["seq_len"])
        )

    try:
        st.session_state[RESULT_KEY] = run_benchmark(config, on_progress=on_progress)
    except Exception as exc:  # a message, never a traceback
        st.error(t("benchmark.run_failed", error=md_escape(str(exc)[:300])), icon=":material/error:")
    bar.empty()

doc = st.session_state.get(RESULT_KEY)
if doc:
    env, cfg = doc["env"], doc["env"]["config"]
    st.subheader(t("benchmark.your_run"))
    st.caption(
        t(
            "benchmark.run_caption",
            device=md_escape(env["device_name"]),
            torch=md_escape(env["torch"]),
            threads=env["cpu_threads"],
            dtype=", ".join(cfg["dtypes"]),
            batch=cfg["batch"],
            heads=cfg["heads"],
            head_dim=cfg["head_dim"],
            mask=t("benchmark.causal_short") if cfg["causal"] else t("benchmark.full_short"),
            date=env["date"][:19].replace("T", " "),
        )
    )
    ui.draw_results(doc, "bench.run")
else:
    st.caption(t("benchmark.not_run_yet"))

st.divider()
st.subheader(t("benchmark.recorded_title"))
for line in skipped:
    st.warning(t("benchmark.recorded_skipped", line=md_escape(line)), icon=":material/warning:")
if not runs:
    st.info(t("benchmark.no_recorded"), icon=":material/info:")
    st.code(
        "python -m attnlab.bench --device cuda --dtype float16,bfloat16,float32 \\\n"
        "    --seq-lens 256,512,1024,2048,4096,8192,16384 --heads 16 --head-dim 64 \\\n"
        "    --out data/gpu/h100-d64.json",
        language="bash",
    )
else:
    st.caption(t("benchmark.recorded_intro"))
    labels = {stem: run.label for stem, run in by_stem.items()}
    keep_choice(K["rec"], list(by_stem), next(iter(by_stem)))
    left, right = st.columns([3, 1])
    left.selectbox(
        t("benchmark.recorded_pick"), list(by_stem), format_func=labels.get, key=K["rec"], persist_state="session"
    )
    run = by_stem[st.session_state[K["rec"]]]
    here = [d for d in DTYPES if any(r["dtype"] == d for r in run.results)]
    keep_choice(K["rdtype"], here, here[0])
    right.selectbox(t("benchmark.dtype"), here, key=K["rdtype"], persist_state="session")
    state.save(SCOPE, PARAMS)
    st.markdown(f"##### {md_escape(run.label)}")
    st.caption(ui.env_caption(run.env, run.path.name))
    rows = [r for r in run.results if r["dtype"] == st.session_state[K["rdtype"]]]
    ui.draw_results({"env": run.env, "results": rows}, "bench.rec", downloads=False)
