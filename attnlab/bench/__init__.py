"""Timing harness for attention implementations (torch + numpy only; no streamlit, no plotly).

Use `run_benchmark(BenchConfig(...), on_progress=...)` from a page, or the CLI `python -m attnlab.bench`.
One job per module: `config` (what to measure), `row` (the result schema), `env` (where it runs),
`reference` (the float64 answer), `impls` (the calls), `measure` (one row), `sweep` (all rows),
`memory` (memory the sizes need), `peaks` (datasheet peaks), `plan` (what the record preset fits on a device,
and how long it takes), `record` (the record preset, `--preset record`), `results` (results files from anyone:
data/gpu/ and uploads, hardened), `maskrule` (the mask rules), `flex` (FlexAttention, compiled or eager),
`studies` (what a result set says about sliding windows and grouped heads).
"""

from attnlab.bench.config import IMPLS, SDPA_BACKENDS, BenchConfig, Progress
from attnlab.bench.env import environment, resolve_device
from attnlab.bench.measure import attention_flops, time_call
from attnlab.bench.memory import (
    DTYPES,
    MATRIX_COPIES,
    MEMORY_CAP_BYTES,
    attention_matrix_bytes,
    estimated_peak_bytes,
    format_bytes,
    memory_cap_message,
    over_memory_cap,
)
from attnlab.bench.peaks import KNOWN_PEAKS, known_peak_tflops, peak_share
from attnlab.bench.reference import reference_attention
from attnlab.bench.results import (
    DEFAULT_RESULTS_DIR,
    RecordedRun,
    ResultsError,
    load_recorded,
    load_results,
    validate_document,
)
from attnlab.bench.row import RESULT_KEYS, ResultRow
from attnlab.bench.studies import KvStudy, WindowStudy, kv_bytes, kv_studies, window_studies
from attnlab.bench.sweep import iter_benchmark, run_benchmark, sweep_documents, total_rows

__all__ = [
    "DEFAULT_RESULTS_DIR",
    "DTYPES",
    "IMPLS",
    "KNOWN_PEAKS",
    "MATRIX_COPIES",
    "MEMORY_CAP_BYTES",
    "RESULT_KEYS",
    "SDPA_BACKENDS",
    "BenchConfig",
    "Progress",
    "RecordedRun",
    "ResultsError",
    "ResultRow",
    "attention_flops",
    "attention_matrix_bytes",
    "environment",
    "estimated_peak_bytes",
    "format_bytes",
    "iter_benchmark",
    "KvStudy",
    "kv_bytes",
    "kv_studies",
    "known_peak_tflops",
    "load_recorded",
    "load_results",
    "memory_cap_message",
    "over_memory_cap",
    "peak_share",
    "reference_attention",
    "resolve_device",
    "run_benchmark",
    "sweep_documents",
    "total_rows",
    "WindowStudy",
    "window_studies",
    "time_call",
    "validate_document",
]
