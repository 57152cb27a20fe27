"""Timing harness for attention implementations (torch + numpy only; no streamlit, no plotly).

Use `run_benchmark(BenchConfig(...), on_progress=...)` from a page, or the CLI
`python -m attnlab.bench`. Recorded GPU results ship as JSON in data/gpu/ and load with
`load_recorded()`.
"""

from attnlab.bench.harness import (
    IMPLS,
    RESULT_KEYS,
    SDPA_BACKENDS,
    BenchConfig,
    Progress,
    attention_flops,
    environment,
    iter_benchmark,
    reference_attention,
    resolve_device,
    run_benchmark,
    time_call,
)
from attnlab.bench.limits import (
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
from attnlab.bench.results import DEFAULT_RESULTS_DIR, RecordedRun, load_recorded, validate_document

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
    "attention_flops",
    "attention_matrix_bytes",
    "environment",
    "estimated_peak_bytes",
    "format_bytes",
    "iter_benchmark",
    "known_peak_tflops",
    "load_recorded",
    "memory_cap_message",
    "over_memory_cap",
    "peak_share",
    "reference_attention",
    "resolve_device",
    "run_benchmark",
    "time_call",
    "validate_document",
]
