"""Benchmark results from anyone: an upload or data/gpu/*.json, read as hostile bytes and checked to the schema.

`load_results(filename, data)` reads one file the way the weights and attention-file readers do, through
`attnlab.untrusted`: the size against the cap, a pickle named as one, the JSON's containers and commas
counted before json.loads builds anything (repeated keys, depth and giant integers refused), then the
schema: an env whose torch, device name and date are short plain text (the date ISO 8601) and whose
peaks are finite positive numbers, and at most MAX_RESULTS_ROWS rows of contract 3, every number finite
and non-negative, timings ordered, known implementations and dtypes; contract 15's `kv_heads` (a divisor of
heads) and `mask` (a rule that agrees with `causal`), flex's `mode` and an unsupported row's `detail` (PyTorch's
whole text, at most MAX_RESULTS_DETAIL_CHARS) are checked when a row has them, and a row without them (a file
recorded before) reads as every head its own keys, the mask its `causal` says and no detail.
Only what the page uses is kept: the returned env holds the checked keys and nothing else. Every refusal is a
ResultsError whose `reason` names `bench_errors.<reason>` in each language; nothing else gets out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from attnlab.bench.config import IMPLS
from attnlab.bench.memory import DTYPES
from attnlab.bench.row import RESULT_KEYS, ResultRow, row_problem
from attnlab.limits import (
    MAX_RESULTS_DETAIL_CHARS,
    MAX_RESULTS_FILE_BYTES,
    MAX_RESULTS_JSON_ITEMS,
    MAX_RESULTS_ROWS,
    MAX_RESULTS_SIZE,
    MAX_RESULTS_STATUS_CHARS,
    MAX_RESULTS_TEXT_CHARS,
)
from attnlab.untrusted import DETAIL_CHARS, JsonRules, Refusal, clip, parse_json, pickled

DEFAULT_RESULTS_DIR = Path(__file__).resolve().parents[2] / "data" / "gpu"
ENV_TEXT = ("torch", "device_name", "date")  # what a label on the page needs
ENV_OPTIONAL_TEXT = ("cuda", "device")
JSON_RULES = JsonRules(MAX_RESULTS_JSON_ITEMS, commas=True, bom=True)


class ResultsError(ValueError):
    """A results file that cannot be shown: `reason` picks `bench_errors.<reason>`, `fmt` fills it (values clipped)."""

    def __init__(self, reason: str, detail: str | None = None, **fmt: object) -> None:
        self.reason = reason
        self.fmt = {k: v if isinstance(v, int | float) and not isinstance(v, bool) else clip(v) for k, v in fmt.items()}
        self.detail = clip(detail, DETAIL_CHARS) if detail is not None else None
        words = ", ".join(f"{k}={v}" for k, v in self.fmt.items())
        super().__init__(f"{reason}" + (f" ({words})" if words else "") + (f": {self.detail}" if self.detail else ""))

    def __reduce__(self) -> tuple:
        """Pickled as its reason, detail and fields (a cache keeps refusals), not as its message."""
        return (_rebuilt, (self.reason, self.detail, self.fmt))


def _rebuilt(reason: str, detail: str | None, fmt: dict) -> ResultsError:
    """A ResultsError back from a pickle."""
    return ResultsError(reason, detail, **fmt)


@dataclass(frozen=True)
class RecordedRun:
    """One results file: its name (as given, never opened again), its checked env and its rows."""

    name: str
    env: dict
    results: list[ResultRow]

    @property
    def stem(self) -> str:
        """The name without its suffix: the page's key for a recorded file."""
        return Path(self.name).stem or self.name

    @property
    def label(self) -> str:
        """'NVIDIA H100 80GB HBM3 · torch 2.x · 2025-01-01': what the page prints above the numbers."""
        return f"{self.env['device_name']} · torch {self.env['torch']} · {str(self.env['date'])[:10]}"


@dataclass(frozen=True)
class Skipped:
    """A file of data/gpu/ that was not loaded, and why."""

    name: str
    error: ResultsError

    def __str__(self) -> str:
        return f"{self.name}: {self.error}"


def json_kind(value: object) -> str:
    """What a JSON value is, as one word the page translates (`bench_errors.kind_<word>`)."""
    if isinstance(value, bool):
        return "boolean"
    kinds = {list: "list", dict: "object", str: "string", type(None): "null", int: "number", float: "number"}
    return kinds.get(type(value), "object")


def _refused(err: Refusal) -> ResultsError:
    """The ResultsError for a refusal of `attnlab.untrusted`'s JSON reader."""
    match err.reason:
        case "json_too_many":
            return ResultsError("too_complex", count=err.fmt["count"], cap=err.fmt["cap"])
        case "json_too_deep":
            return ResultsError("too_deep")
        case "json_duplicate_key":
            return ResultsError("duplicate_key", key=err.fmt["key"])
        case "json_number_too_long":
            return ResultsError("number_too_long")
    return ResultsError("not_json", err.detail)


def _text(env: dict, key: str, required: bool) -> str | None:
    """One text field of env: a string of bounded length that UTF-8 can carry (no lone surrogate)."""
    value = env.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise ResultsError("env_field", field=key, found="empty" if isinstance(value, str) else json_kind(value))
    if len(value) > MAX_RESULTS_TEXT_CHARS:
        raise ResultsError("text_long", field=key, cap=MAX_RESULTS_TEXT_CHARS)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ResultsError("text_invalid", field=key) from None
    return value


def _peaks(value: object) -> dict[str, float]:
    """env.peak_tflops: dtype -> a finite positive TFLOP/s (null: unknown, left out)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ResultsError("env_field", field="peak_tflops", found=json_kind(value))
    peaks = {}
    for dtype, peak in value.items():
        if peak is None:
            continue
        number = isinstance(peak, int | float) and not isinstance(peak, bool)
        if dtype not in DTYPES or not number or not math.isfinite(peak) or peak <= 0:
            raise ResultsError("peak", dtype=dtype, value=peak)
        peaks[dtype] = float(peak)
    return peaks


def _env(env: object) -> dict:
    """The env block, checked, holding only what the page reads."""
    if not isinstance(env, dict):
        raise ResultsError("no_env", found=json_kind(env))
    out: dict = {key: _text(env, key, True) for key in ENV_TEXT}
    out |= {key: _text(env, key, False) for key in ENV_OPTIONAL_TEXT}
    try:
        datetime.fromisoformat(out["date"])
    except ValueError:
        raise ResultsError("date", date=out["date"]) from None
    out["peak_tflops"] = _peaks(env.get("peak_tflops"))
    preset = env.get("preset")
    out["dry_run"] = isinstance(preset, dict) and preset.get("dry_run") is True
    check = env.get("timer_check")
    ratio = check.get("ratio") if isinstance(check, dict) else None
    if isinstance(ratio, float) and math.isfinite(ratio) and ratio > 0:
        out["timer_ratio"] = ratio
    return out


def _rows(rows: object) -> list[ResultRow]:
    """The results list: bounded, every row valid, read into ResultRows (extra keys dropped)."""
    if not isinstance(rows, list):
        raise ResultsError("no_results", found=json_kind(rows))
    if not rows:
        raise ResultsError("no_rows")
    if len(rows) > MAX_RESULTS_ROWS:
        raise ResultsError("too_many_rows", count=len(rows), cap=MAX_RESULTS_ROWS)
    out = []
    for index, row in enumerate(rows):
        problem = row_problem(
            row, IMPLS, tuple(DTYPES), MAX_RESULTS_SIZE, MAX_RESULTS_STATUS_CHARS, MAX_RESULTS_DETAIL_CHARS
        )
        if problem is not None:
            reason, fields = problem
            raise ResultsError(f"row_{reason}", index=index, **fields)
        values = {key: row.get(key) for key in RESULT_KEYS}  # contract 15's keys may be absent (older files)
        if values["peak_mem_bytes"] is not None:
            values["peak_mem_bytes"] = int(values["peak_mem_bytes"])
        out.append(ResultRow.from_dict(values))
    return out


def load_results(filename: str, data: bytes) -> RecordedRun:
    """A results file from anyone, checked before and after parsing; ResultsError naming the reason otherwise."""
    try:
        name = clip(filename, MAX_RESULTS_TEXT_CHARS)
        if len(data) > MAX_RESULTS_FILE_BYTES:
            raise ResultsError("too_big", size=len(data), cap=MAX_RESULTS_FILE_BYTES)
        if pickled(data):
            raise ResultsError("pickle")
        try:
            doc = parse_json(data, JSON_RULES)
        except Refusal as err:
            raise _refused(err) from None
        if not isinstance(doc, dict):
            raise ResultsError("not_object", found=json_kind(doc))
        return RecordedRun(name, _env(doc.get("env")), _rows(doc.get("results")))
    except ResultsError:
        raise
    except Exception as exc:  # a check this reader lacks: refused, never a traceback
        raise ResultsError("unreadable", f"{type(exc).__name__}: {exc}") from None


def validate_document(doc: object) -> list[str]:
    """Everything wrong with a results document already in memory, as English lines (empty: it is valid)."""
    try:
        load_results("document.json", json.dumps(doc, allow_nan=True).encode("utf-8"))
    except (ResultsError, TypeError, ValueError) as err:
        return [str(err)]
    return []


def load_recorded(directory: str | Path = DEFAULT_RESULTS_DIR) -> tuple[list[RecordedRun], list[Skipped]]:
    """(valid runs sorted by file name, the files skipped and why) from directory/*.json."""
    runs: list[RecordedRun] = []
    skipped: list[Skipped] = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            size = path.stat().st_size
            if size > MAX_RESULTS_FILE_BYTES:
                raise ResultsError("too_big", size=size, cap=MAX_RESULTS_FILE_BYTES)
            runs.append(load_results(path.name, path.read_bytes()))
        except OSError as err:
            skipped.append(Skipped(path.name, ResultsError("unreadable", str(err))))
        except ResultsError as err:
            skipped.append(Skipped(path.name, err))
    return runs, skipped
