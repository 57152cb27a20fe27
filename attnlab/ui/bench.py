"""Streamlit pieces of the Benchmark page: URL parsers for lists, the device line, a result set drawn as
charts + table + downloads, and the recorded GPU results."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st
import torch

from attnlab.bench import results as recorded
from attnlab.bench.harness import device_name
from attnlab.bench.limits import (
    MATRIX_COPIES,
    MEMORY_CAP_BYTES,
    as_dtype,
    attention_matrix_bytes,
    estimated_peak_bytes,
    format_bytes,
    memory_cap_message,
)
from attnlab.bench.peaks import known_peak_tflops, peak_share
from attnlab.figures_bench import memory_figure, tflops_figure, time_figure
from attnlab.params import Invalid
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape

SEQ_OPTIONS: tuple[int, ...] = tuple(2**i for i in range(4, 15))  # 16 .. 16384


def list_of(options: Sequence, default: Sequence, convert: Callable[[str], object] = str) -> Callable[[str], list]:
    """A URL parser for a comma list whose items must be among `options`; unknown items are dropped (and said)."""

    def parse(raw: str) -> list:
        items = [s.strip().lower() for s in str(raw).split(",") if s.strip()]
        good, bad = [], []
        for item in items:
            try:
                value = convert(item)
            except ValueError:
                value = None
            (good if value in options and value not in good else bad).append(value if value in options else item)
        good = [o for o in options if o in good]  # canonical order
        if bad or not good:
            raise Invalid("not_choice", good or list(default), options=", ".join(str(o) for o in options))
        return good

    return parse


def dump_list(values: Sequence) -> str:
    """A list travels as a comma list in the URL."""
    return ",".join(str(v) for v in values)


def on_gpu() -> bool:
    """Whether this server has a CUDA GPU (the benchmark then runs there, with no memory cap)."""
    return torch.cuda.is_available()


def device_line(dtype: str) -> None:
    """Which device a run will use: the GPU's name and datasheet peak, or the CPU."""
    if on_gpu():
        name = torch.cuda.get_device_name(0)
        peak = known_peak_tflops(name, dtype)
        text = (
            t("benchmark.device_gpu", name=md_escape(name), peak=f"{peak:g}", dtype=dtype)
            if peak
            else t("benchmark.device_gpu_unknown", name=md_escape(name))
        )
        st.success(text, icon=":material/memory:")
    else:
        name = device_name(torch.device("cpu")).removeprefix("CPU: ")
        st.info(t("benchmark.device_cpu", name=md_escape(name)), icon=":material/computer:")


def refusals(batch: int, heads: int, seq_lens: Sequence[int], dtype: str, impls: Sequence[str]) -> dict[int, str]:
    """{T: translated reason} for each length whose memory would pass the cap (CPU-only hosts)."""
    if on_gpu():
        return {}
    out = {}
    for seq in seq_lens:
        if memory_cap_message(batch, heads, seq, dtype, impls=tuple(impls)) is None:
            continue
        matrix = attention_matrix_bytes(batch, heads, seq, seq, dtype)
        need = estimated_peak_bytes(batch, heads, seq, dtype, tuple(impls))
        hungry = [i for i in impls if MATRIX_COPIES.get(i, 0) * matrix > MEMORY_CAP_BYTES]
        extra = t("benchmark.cap_extra", impls=", ".join(hungry), need=format_bytes(need)) if need > matrix else ""
        out[seq] = t(
            "benchmark.cap_refused",
            t=seq,
            shape=f"{batch} × {heads} × {seq} × {seq}",
            dtype=str(as_dtype(dtype)).removeprefix("torch."),
            matrix=format_bytes(matrix),
            extra=extra,
            cap=format_bytes(MEMORY_CAP_BYTES),
        )
    return out


def _num(x: float | None, spec: str) -> str:
    return "" if x is None else format(x, spec)


def results_frame(doc: dict) -> pd.DataFrame:
    """The result rows as a table with translated headers; blank where nothing was measured."""
    env = doc["env"]
    rows = []
    for r in doc["results"]:
        share = peak_share(r, env)
        rows.append(
            {
                t("benchmark.col_impl"): r["impl"],
                t("benchmark.col_dtype"): r["dtype"],
                "T": r["seq_len"],
                t("benchmark.col_median"): _num(r["median_ms"], ".4g"),
                "p20 ms": _num(r["p20_ms"], ".4g"),
                "p80 ms": _num(r["p80_ms"], ".4g"),
                "TFLOP/s": _num(r["tflops"], ".4g"),
                t("benchmark.col_share"): _num(share, ".1%"),
                t("benchmark.col_mem"): "" if r["peak_mem_bytes"] is None else format_bytes(r["peak_mem_bytes"]),
                t("benchmark.col_err"): _num(r["max_abs_err"], ".1e"),
                t("benchmark.col_status"): r["status"],
            }
        )
    frame = pd.DataFrame(rows)
    share = t("benchmark.col_share")
    if not frame.empty and not frame[share].astype(bool).any():  # no known peak: no empty column
        frame = frame.drop(columns=share)
    return frame


def csv_text(doc: dict) -> str:
    """Every result row with its raw numbers (and the share of peak when known), as CSV."""
    frame = pd.DataFrame([{**r, "peak_share": peak_share(r, doc["env"])} for r in doc["results"]])
    return frame.to_csv(index=False)


def statuses(rows: Sequence[dict]) -> None:
    """Rows that could not run, said plainly: unsupported as information, out-of-memory as a warning."""
    unsupported = {}
    for r in rows:
        if r["status"].startswith("unsupported: "):
            unsupported.setdefault((r["impl"], r["status"].removeprefix("unsupported: ")), []).append(r)
    for (impl, why), rs in unsupported.items():
        lengths = ", ".join(str(r["seq_len"]) for r in rs)
        dtypes = ", ".join(sorted({r["dtype"] for r in rs}))
        st.info(
            t("benchmark.unsupported", impl=impl, dtype=dtypes, lengths=lengths, why=md_escape(why)),
            icon=":material/info:",
        )
    oom = [r for r in rows if r["status"] == "oom"]
    if oom:
        what = ", ".join(f"{r['impl']} T={r['seq_len']}" for r in oom)
        st.warning(t("benchmark.oom", what=what), icon=":material/warning:")


def draw_results(doc: dict, key: str, downloads: bool = True) -> None:
    """Time, memory and TFLOP/s charts, the status notes and the table of one result set."""
    rows = doc["results"]
    names = dict(causal_names=(t("benchmark.causal_short"), t("benchmark.full_short")))
    x_title = t("benchmark.axis_t")
    if not any(r["status"] == "ok" for r in rows):
        st.warning(t("benchmark.nothing_ok"), icon=":material/warning:")
    else:
        left, right = st.columns(2)
        with left:
            fig = time_figure(
                rows, t("benchmark.time_title"), x_title, t("benchmark.axis_ms"), t("benchmark.slope"), **names
            )
            chart(fig, f"{key}.time")
        with right:
            fig = memory_figure(
                rows, t("benchmark.mem_title"), x_title, t("benchmark.axis_bytes"), t("benchmark.slope"), **names
            )
            chart(fig, f"{key}.mem")
        peaks = doc["env"].get("peak_tflops") or {}
        fig = tflops_figure(
            rows, t("benchmark.tflops_title"), x_title, "TFLOP/s", peaks, t("benchmark.of_peak"), **names
        )
        chart(fig, f"{key}.tflops")
        st.caption(t("benchmark.read_charts"))
    statuses(rows)
    st.dataframe(results_frame(doc), hide_index=True, width="stretch")
    if downloads:
        left, right, _ = st.columns([1, 1, 3])
        left.download_button(
            t("benchmark.download_csv"),
            csv_text(doc),
            file_name="attnlab-bench.csv",
            mime="text/csv",
            icon=":material/download:",
            key=f"{key}.csv",
        )
        right.download_button(
            t("benchmark.download_json"),
            json.dumps(doc, indent=1),
            file_name="attnlab-bench.json",
            mime="application/json",
            icon=":material/download:",
            key=f"{key}.json",
        )


def recorded_runs() -> tuple[list[recorded.RecordedRun], list[str]]:
    """The GPU results shipped in data/gpu/ (looked up at call time, so tests can point elsewhere)."""
    return recorded.load_recorded(recorded.DEFAULT_RESULTS_DIR)


def env_caption(env: dict, path_name: str) -> str:
    """Where a recorded file's numbers came from, as one line of plain text."""
    cuda = env.get("cuda") or "-"
    return t(
        "benchmark.recorded_env", file=md_escape(path_name), cuda=md_escape(str(cuda)), date=md_escape(str(env["date"]))
    )
