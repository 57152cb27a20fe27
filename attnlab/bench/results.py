"""Load benchmark JSON recorded on real hardware (data/gpu/*.json), refusing files that break the schema."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from attnlab.bench.harness import IMPLS, RESULT_KEYS

DEFAULT_RESULTS_DIR = Path(__file__).resolve().parents[2] / "data" / "gpu"
ENV_REQUIRED = ("torch", "device_name", "date")  # what a label on the page needs
MAX_FILE_BYTES = 5 * 2**20
_INT_KEYS = ("batch", "heads", "seq_len", "head_dim")
_NUM_KEYS = ("median_ms", "p20_ms", "p80_ms", "tflops", "peak_mem_bytes", "max_abs_err")


@dataclass(frozen=True)
class RecordedRun:
    """One results file: where it came from, its env block and its rows."""

    path: Path
    env: dict
    results: list[dict]

    @property
    def label(self) -> str:
        """'NVIDIA H100 80GB HBM3 · torch 2.x · 2025-01-01': what the page prints above the numbers."""
        return f"{self.env['device_name']} · torch {self.env['torch']} · {str(self.env['date'])[:10]}"


def _is_num(x: object) -> bool:
    """A JSON number (bools are not numbers here)."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def _row_problem(i: int, row: object) -> str | None:
    """Why a result row breaks the schema, or None."""
    if not isinstance(row, dict):
        return f"results[{i}] is not an object"
    missing = [k for k in RESULT_KEYS if k not in row]
    if missing:
        return f"results[{i}] lacks {missing}"
    status = row["status"]
    if not isinstance(status, str) or not (status in ("ok", "oom") or status.startswith("unsupported: ")):
        return f"results[{i}].status must be ok, oom or 'unsupported: why', got {status!r}"
    if row["impl"] not in IMPLS:
        return f"results[{i}].impl {row['impl']!r} is not one of {IMPLS}"
    if not all(isinstance(row[k], int) and not isinstance(row[k], bool) and row[k] > 0 for k in _INT_KEYS):
        return f"results[{i}] needs positive integers for {_INT_KEYS}"
    if not isinstance(row["causal"], bool) or not isinstance(row["dtype"], str):
        return f"results[{i}] needs a boolean causal and a string dtype"
    if any(row[k] is not None and not _is_num(row[k]) for k in _NUM_KEYS):
        return f"results[{i}] has a non-numeric value in {_NUM_KEYS}"
    if status == "ok" and not all(_is_num(row[k]) for k in ("median_ms", "p20_ms", "p80_ms")):
        return f"results[{i}] is ok but has no timings"
    return None


def validate_document(doc: object) -> list[str]:
    """Everything wrong with a loaded results document (empty list: it is valid)."""
    if not isinstance(doc, dict):
        return ["top level is not an object"]
    problems = []
    env, results = doc.get("env"), doc.get("results")
    if not isinstance(env, dict):
        problems.append("env is missing or not an object")
    else:
        problems += [f"env lacks {k}" for k in ENV_REQUIRED if not isinstance(env.get(k), str)]
    if not isinstance(results, list):
        return [*problems, "results is missing or not a list"]
    problems += [p for i, row in enumerate(results) if (p := _row_problem(i, row))]
    return problems


def load_recorded(directory: str | Path = DEFAULT_RESULTS_DIR) -> tuple[list[RecordedRun], list[str]]:
    """(valid runs sorted by file name, one 'file: why' line per skipped file) from directory/*.json."""
    runs: list[RecordedRun] = []
    skipped: list[str] = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            skipped.append(f"{path.name}: {exc}")
            continue
        problems = validate_document(doc)
        if problems:
            skipped.append(f"{path.name}: {problems[0]}")
            continue
        runs.append(RecordedRun(path, doc["env"], doc["results"]))
    return runs, skipped
