"""Load benchmark JSON recorded on real hardware (data/gpu/*.json), refusing files that break the schema."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from attnlab.bench.config import IMPLS
from attnlab.bench.row import ResultRow, problem
from attnlab.limits import MAX_RESULTS_FILE_BYTES

DEFAULT_RESULTS_DIR = Path(__file__).resolve().parents[2] / "data" / "gpu"
ENV_REQUIRED = ("torch", "device_name", "date")  # what a label on the page needs


@dataclass(frozen=True)
class RecordedRun:
    """One results file: where it came from, its env block and its rows."""

    path: Path
    env: dict
    results: list[ResultRow]

    @property
    def label(self) -> str:
        """'NVIDIA H100 80GB HBM3 · torch 2.x · 2025-01-01': what the page prints above the numbers."""
        return f"{self.env['device_name']} · torch {self.env['torch']} · {str(self.env['date'])[:10]}"


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
    problems += [f"results[{i}] {p}" for i, row in enumerate(results) if (p := problem(row, IMPLS))]
    return problems


def load_recorded(directory: str | Path = DEFAULT_RESULTS_DIR) -> tuple[list[RecordedRun], list[str]]:
    """(valid runs sorted by file name, one 'file: why' line per skipped file) from directory/*.json."""
    runs: list[RecordedRun] = []
    skipped: list[str] = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            if path.stat().st_size > MAX_RESULTS_FILE_BYTES:
                raise ValueError(f"larger than {MAX_RESULTS_FILE_BYTES} bytes")
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            skipped.append(f"{path.name}: {exc}")
            continue
        problems = validate_document(doc)
        if problems:
            skipped.append(f"{path.name}: {problems[0]}")
            continue
        runs.append(RecordedRun(path, doc["env"], [ResultRow.from_dict(row) for row in doc["results"]]))
    return runs, skipped
