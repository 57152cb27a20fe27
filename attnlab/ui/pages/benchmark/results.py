"""Drawing a set of benchmark results: device line, refusals by the memory cap, charts, statuses, table, downloads.

The Benchmark page draws its own run, the recorded GPU runs and an upload through `draw_results`, so they read
the same way. Rows are `ResultRow`s; only measured values are drawn. A row that could not run says why in one
sentence of the reader's language (`attnlab.bench.reasons` distils PyTorch's text, whenever the file was written),
with PyTorch's whole text behind a disclosure. The files in data/gpu/ are parsed once per change to the folder
(`st.cache_data`, keyed on each file's name, size and modification time) with their headlines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st
import torch

from attnlab.bench import results as recorded
from attnlab.bench.env import device_name
from attnlab.bench.headline import Headline, headline
from attnlab.bench.memory import MEMORY_CAP_BYTES, as_dtype, attention_matrix_bytes, estimated_peak_bytes, format_bytes
from attnlab.bench.peaks import known_peak_tflops, peak_share
from attnlab.bench.reasons import Reason, distil
from attnlab.bench.row import ResultRow
from attnlab.figures.bench import memory_figure, tflops_figure, time_figure
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart
from attnlab.ui.pages.benchmark import modern


def on_gpu() -> bool:
    """Whether this server has a CUDA GPU (the benchmark then runs there, with no memory cap)."""
    return torch.cuda.is_available()


def device_line(dtype: str) -> None:
    """Which device a run will use: the GPU's name and datasheet peak, or the CPU."""
    if on_gpu():
        name = torch.cuda.get_device_name(0)
        peak = known_peak_tflops(name, dtype)
        text = (
            t("benchmark.device_gpu", name=code(name), peak=f"{peak:g}", dtype=dtype)
            if peak
            else t("benchmark.device_gpu_unknown", name=code(name))
        )
        st.success(text, icon=":material/memory:")
    else:
        name = device_name(torch.device("cpu")).removeprefix("CPU: ")
        st.info(t("benchmark.device_cpu", name=code(name)), icon=":material/computer:")


def refusals(
    batch: int,
    heads: int,
    head_dim: int,
    seq_lens: Sequence[int],
    dtype: str,
    impls: Sequence[str],
    kv_heads: Sequence[int] = (),
    mask: str = "full",
) -> dict[int, str]:
    """{T: translated reason} for each length whose estimated memory would pass the cap (CPU-only hosts).

    With several key/value head counts the hungriest one counts (their rows run one after another)."""
    if on_gpu():
        return {}
    out = {}
    for seq in seq_lens:
        need = max(
            estimated_peak_bytes(batch, heads, seq, dtype, tuple(impls), head_dim, kv_heads=kv, mask=mask)
            for kv in (kv_heads or (heads,))
        )
        if need <= MEMORY_CAP_BYTES:
            continue
        out[seq] = t(
            "benchmark.cap_refused",
            t=seq,
            need=format_bytes(need),
            shape=f"{batch} × {heads} × {seq} × {seq}",
            dtype=str(as_dtype(dtype)).removeprefix("torch."),
            matrix=format_bytes(attention_matrix_bytes(batch, heads, seq, seq, dtype)),
            cap=format_bytes(MEMORY_CAP_BYTES),
        )
    return out


def _num(x: float | None, spec: str) -> str:
    """A measured number, or blank where nothing was measured."""
    return "" if x is None else format(x, spec)


def results_frame(rows: Sequence[ResultRow], env: dict) -> pd.DataFrame:
    """The rows as a table with translated headers; blank where nothing was measured."""
    share_col = t("benchmark.col_share")
    frame = pd.DataFrame(
        [
            {
                t("benchmark.col_impl"): r.impl,
                t("benchmark.col_dtype"): r.dtype,
                t("benchmark.col_mask"): r.mask,
                t("benchmark.col_kv"): r.kv_heads,
                "T": r.seq_len,
                t("benchmark.col_median"): _num(r.median_ms, ".4g"),
                "p20 ms": _num(r.p20_ms, ".4g"),
                "p80 ms": _num(r.p80_ms, ".4g"),
                "TFLOP/s": _num(r.tflops, ".4g"),
                share_col: _num(peak_share(r.dtype, r.tflops, env), ".1%"),
                t("benchmark.col_mem"): "" if r.peak_mem_bytes is None else format_bytes(r.peak_mem_bytes),
                t("benchmark.col_err"): _num(r.max_abs_err, ".1e"),
                t("benchmark.col_status"): status_text(r),
            }
            for r in rows
        ]
    )
    if not frame.empty and not frame[share_col].astype(bool).any():  # no known peak: no empty column
        frame = frame.drop(columns=share_col)
    return frame


def csv_text(rows: Sequence[ResultRow], env: dict) -> str:
    """Every row with its raw numbers (and the share of peak when known), as CSV."""
    table = [{**r.to_dict(), "peak_share": peak_share(r.dtype, r.tflops, env)} for r in rows]
    return pd.DataFrame(table).to_csv(index=False)


BACKEND_KEYS = {"sdpa-flash": "flash", "sdpa-efficient": "efficient", "sdpa-cudnn": "cudnn", "sdpa-math": "math"}


def reason_text(reason: Reason, markdown: bool = True) -> str:
    """A distilled reason in the reader's language; PyTorch's own sentence, where it is one, as a code span (as it
    is, for a table cell, which is never markdown)."""
    backend = t(f"benchmark.backend_{BACKEND_KEYS[reason.impl]}") if reason.impl in BACKEND_KEYS else reason.impl
    fields = dict(backend=backend, got=reason.got, device=reason.device.upper() or "?")
    fields["allowed"] = t("benchmark.or").join(reason.allowed)
    if reason.key == "same_heads" and reason.heads:
        return t("benchmark.reason_same_heads_n", q=reason.heads[0], kv=reason.heads[1], **fields)
    if reason.key in ("other", "plan"):
        return t(f"benchmark.reason_{reason.key}", text=code(reason.text, 300) if markdown else reason.text[:300])
    return t(f"benchmark.reason_{reason.key}", **fields)


def why(r: ResultRow, markdown: bool = True) -> str:
    """Why an unsupported row did not run, in one sentence of the reader's language."""
    return reason_text(distil(r.impl, r.full_reason or "", r.device), markdown)


def status_text(r: ResultRow) -> str:
    """The table's status: ok and oom as written, an unsupported row with its reason in one sentence."""
    return r.status if r.unsupported_reason is None else f"{t('benchmark.status_unsupported')}: {why(r, False)}"


def statuses(rows: Sequence[ResultRow]) -> None:
    """Rows that could not run, said plainly: unsupported as information with its reason in one sentence (PyTorch's
    whole text behind a disclosure), oom as a warning."""
    unsupported: dict[tuple[str, str], list[ResultRow]] = {}
    for r in rows:
        if r.unsupported_reason is not None:
            unsupported.setdefault((r.impl, why(r)), []).append(r)
    for (impl, reason), rs in unsupported.items():
        lengths = ", ".join(str(r.seq_len) for r in rs)
        dtypes = ", ".join(sorted({r.dtype for r in rs}))
        said = t("benchmark.unsupported_why", impl=impl, dtype=dtypes, lengths=lengths, why=reason)
        st.info(said, icon=":material/info:")
        with st.expander(t("benchmark.pytorch_said", impl=impl)):
            for text in dict.fromkeys(r.full_reason for r in rs):
                st.code(text, language=None, wrap_lines=True)
    oom = [r for r in rows if r.status == "oom"]
    if oom:
        st.warning(
            t("benchmark.oom", what=", ".join(f"{r.impl} T={r.seq_len}" for r in oom)), icon=":material/warning:"
        )
    modern.mode_notes(rows)


def charts(rows: Sequence[ResultRow], env: dict, key: str) -> None:
    """Time, memory and TFLOP/s against T, one line per implementation."""
    names = dict(
        causal_names=(t("benchmark.causal_short"), t("benchmark.full_short")), mask_names=modern.mask_names(rows)
    )
    x_title, slope = t("benchmark.axis_t"), t("common.slope")
    left, right = st.columns(2)
    with left:
        chart(
            time_figure(rows, t("benchmark.time_title"), x_title, t("benchmark.axis_ms"), slope, **names), f"{key}.time"
        )
    with right:
        fig = memory_figure(rows, t("benchmark.mem_title"), x_title, t("benchmark.axis_bytes"), slope, **names)
        chart(fig, f"{key}.mem")
    peaks = env.get("peak_tflops") or {}
    fig = tflops_figure(rows, t("benchmark.tflops_title"), x_title, "TFLOP/s", peaks, t("benchmark.of_peak"), **names)
    chart(fig, f"{key}.tflops")
    st.caption(t("benchmark.read_charts"))


def downloads(rows: Sequence[ResultRow], env: dict, key: str) -> None:
    """The result set as CSV and as the CLI's JSON document."""
    left, right, _ = st.columns([1, 1, 3])
    left.download_button(
        t("benchmark.download_csv"),
        csv_text(rows, env),
        file_name="attnlab-bench.csv",
        mime="text/csv",
        icon=":material/download:",
        key=f"{key}.csv",
    )
    document = {"env": env, "results": [r.to_dict() for r in rows]}
    right.download_button(
        t("benchmark.download_json"),
        json.dumps(document, indent=1),
        file_name="attnlab-bench.json",
        mime="application/json",
        icon=":material/download:",
        key=f"{key}.json",
    )


def draw_results(rows: Sequence[ResultRow], env: dict, key: str, with_downloads: bool = True) -> None:
    """Charts, the status notes and the table of one slice of a result set (`grid.pick`)."""
    if not rows:
        st.info(t("benchmark.nothing_picked"), icon=":material/info:")
        return
    if any(r.ok for r in rows):
        charts(rows, env, key)
    else:
        st.warning(t("benchmark.nothing_ok"), icon=":material/warning:")
    statuses(rows)
    st.dataframe(results_frame(rows, env), hide_index=True, width="stretch")
    if with_downloads:
        downloads(rows, env, key)


def recorded_runs() -> tuple[list[recorded.RecordedRun], list[recorded.Skipped], list[Headline | None]]:
    """The GPU results shipped in data/gpu/ and their headlines (the folder looked up at call time, so tests can point
    elsewhere; a file added, changed or removed there shows on the next run, without a restart)."""
    folder = Path(recorded.DEFAULT_RESULTS_DIR)
    stamps = []
    for path in sorted(folder.glob("*.json")):
        try:
            info = path.stat()
        except OSError:  # gone since the listing: the loader says so
            continue
        stamps.append((path.name, info.st_size, info.st_mtime_ns))
    return _parsed_folder(str(folder), tuple(stamps))


@st.cache_data(show_spinner=False, max_entries=4)
def _parsed_folder(
    folder: str, stamps: tuple
) -> tuple[list[recorded.RecordedRun], list[recorded.Skipped], list[Headline | None]]:
    """data/gpu/ parsed and checked, with each run's headline: numbers only, the same for every session."""
    runs, skipped = recorded.load_recorded(folder)
    return runs, skipped, [headline(run.results, run.env, run.label) for run in runs]


def env_caption(env: dict, path_name: str) -> str:
    """Where a recorded file's numbers came from, as one line."""
    cuda = env.get("cuda") or "-"
    return t("benchmark.recorded_env", file=code(path_name), cuda=code(cuda), date=code(str(env["date"])[:19]))
