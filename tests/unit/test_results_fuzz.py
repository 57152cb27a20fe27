"""Results files from anyone (contract 11): hostile files refused with a reason in both languages, fuzzed.

`load_results` returns a RecordedRun whose env holds only checked text and finite peaks and whose rows are
valid, or raises ResultsError with a sentence in both languages (never the catch-all `unreadable`);
nothing else gets out. scripts/fuzz_readers.py --target results runs the strategies here far longer.
"""

from __future__ import annotations

import json
import math
import pickle
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.bench.config import IMPLS
from attnlab.bench.results import RecordedRun, ResultsError, load_results, validate_document
from attnlab.bench.row import NUMBER_FIELDS, RESULT_KEYS
from attnlab.limits import MAX_RESULTS_DETAIL_CHARS, MAX_RESULTS_FILE_BYTES, MAX_RESULTS_ROWS, MAX_RESULTS_TEXT_CHARS
from attnlab.ui.app.i18n import LANGS, catalog

ENV = {"torch": "2.13.0+cu128", "device_name": "NVIDIA H100 80GB HBM3", "date": "2026-11-25T09:00:00+00:00",
       "cuda": "12.8", "device": "cuda", "peak_tflops": {"bfloat16": 989.4, "float64": None}}  # fmt: skip
ROW = {"impl": "sdpa-flash", "device": "cuda", "dtype": "bfloat16", "batch": 2, "heads": 16, "seq_len": 4096,
       "head_dim": 128, "causal": False, "median_ms": 0.5, "p20_ms": 0.49, "p80_ms": 0.52, "tflops": 549.7,
       "peak_mem_bytes": 1 << 20, "max_abs_err": 0.004, "status": "ok"}  # fmt: skip
NOT_RUN = {**ROW, **dict.fromkeys(NUMBER_FIELDS), "impl": "explicit", "status": "oom"}
READ_BACK = {"kv_heads": 16, "mask": "full", "mode": None, "detail": None}  # a row of a file before contract 15


def doc(env: dict | None = None, rows: list | None = None, **top) -> dict:
    return {"env": ENV if env is None else env, "results": [ROW, NOT_RUN] if rows is None else rows, **top}


def raw(document: object) -> bytes:
    return json.dumps(document, allow_nan=True).encode()


def outcome(name: str, data: bytes) -> str:
    """Load one file and check the contract: 'accepted' or the refusal's reason; anything else fails the test."""
    try:
        run = load_results(name, data)
    except ResultsError as err:
        assert err.reason != "unreadable", err.detail
        for lang in LANGS:
            sentence = catalog(lang)[f"bench_errors.{err.reason}"]
            assert {f for _, f, _, _ in string.Formatter().parse(sentence) if f} == set(err.fmt), err.reason
            sentence.format(**err.fmt)
            if "found" in err.fmt:
                assert f"bench_errors.kind_{err.fmt['found']}" in catalog(lang)
        assert all(len(str(v)) <= 40 for v in err.fmt.values()) and (err.detail is None or len(err.detail) <= 200)
        return err.reason
    check_run(run)
    return "accepted"


def check_run(run: RecordedRun) -> None:
    """What every accepted file promises the page."""
    env = run.env
    assert set(env) <= {"torch", "device_name", "date", "cuda", "device", "peak_tflops", "dry_run", "timer_ratio"}
    assert all(isinstance(env[k], str) and 0 < len(env[k]) <= MAX_RESULTS_TEXT_CHARS for k in ("torch", "date"))
    assert all(math.isfinite(p) and p > 0 for p in env["peak_tflops"].values())
    assert 1 <= len(run.results) <= MAX_RESULTS_ROWS
    for r in run.results:
        assert r.impl in IMPLS and isinstance(r.causal, bool) and min(r.batch, r.heads, r.seq_len, r.head_dim) >= 1
        numbers = [r.median_ms, r.p20_ms, r.p80_ms, r.tflops, r.peak_mem_bytes, r.max_abs_err]
        assert all(x is None or (math.isfinite(x) and x >= 0) for x in numbers)
        if r.ok:
            assert 0 < r.p20_ms <= r.median_ms <= r.p80_ms


def reason(data: bytes, name: str = "r.json") -> str:
    return outcome(name, data)


def test_a_good_file_is_read_and_only_checked_fields_are_kept():
    extra = {
        **ENV,
        "plan": {"left_out": [{"impl": "explicit"}]},
        "config": {"x": [1, 2]},
        "timer_check": {"ratio": 1.02},
    }
    run = load_results("h100.json", raw(doc(extra, [ROW, {**NOT_RUN, "busy": True}])))
    assert (
        run.name == "h100.json"
        and run.stem == "h100"
        and run.label == "NVIDIA H100 80GB HBM3 · torch 2.13.0+cu128 · 2026-11-25"
    )
    assert run.env["peak_tflops"] == {"bfloat16": 989.4} and run.env["timer_ratio"] == 1.02
    assert "plan" not in run.env and "config" not in run.env
    assert [r.to_dict() for r in run.results] == [{**ROW, **READ_BACK}, {**NOT_RUN, **READ_BACK}]
    assert validate_document(doc()) == [] and validate_document(doc(rows=[])) != []


def test_a_device_name_carrying_html_or_markdown_stays_plain_text():
    name = "<script>alert(1)</script> **[H100](https://evil.example)** ![x](y) `tick` $x$"
    run = load_results("x.json", raw(doc({**ENV, "device_name": name})))
    assert run.env["device_name"] == name and name in run.label  # kept exactly; the page shows it in a code span


HOSTILE = [
    (b" " * (MAX_RESULTS_FILE_BYTES + 1), "too_big"),
    (b"[" * 200_000, "too_big" if 200_000 > MAX_RESULTS_FILE_BYTES else "too_complex"),
    (b"[" * 100_000 + b"]" * 100_000, "too_complex"),
    (b'{"env": ' + b"[" * 30_000 + b"]" * 30_000 + b"}", "too_deep"),
    (pickle.dumps({"env": ENV}), "pickle"),
    (b"\xff\xfe{}", "not_json"),
    (b'{"env": {}, "env": {}}', "duplicate_key"),
    (b'{"results": [' + b"9" * 5000 + b"]}", "number_too_long"),
    (b"[]", "not_object"),
    (raw({"results": [ROW]}), "no_env"),
    (raw(doc({**ENV, "torch": 2.13})), "env_field"),
    (raw(doc({**ENV, "device_name": "  "})), "env_field"),
    (raw(doc({**ENV, "device_name": "G" * (MAX_RESULTS_TEXT_CHARS + 1)})), "text_long"),
    (b'{"env": {"torch": "2", "device_name": "\\ud800", "date": "2026-01-01"}, "results": []}', "text_invalid"),
    (raw(doc({**ENV, "date": "yesterday"})), "date"),
    (raw(doc({**ENV, "peak_tflops": {"bfloat16": -1}})), "peak"),
    (raw(doc({**ENV, "peak_tflops": {"bfloat16": float("nan")}})), "peak"),
    (raw(doc({**ENV, "peak_tflops": "fast"})), "env_field"),
    (raw(doc(rows={"0": ROW})), "no_results"),
    (raw(doc(rows=[])), "no_rows"),
    (raw(doc(rows=[ROW] * (MAX_RESULTS_ROWS + 1))), "too_many_rows"),
    (raw(doc(rows=[ROW, "row"])), "row_not_object"),
    (raw(doc(rows=[{k: v for k, v in ROW.items() if k != "tflops"}])), "row_missing"),
    (raw(doc(rows=[{**ROW, "status": "fast"}])), "row_status"),
    (raw(doc(rows=[{**NOT_RUN, "status": "unsupported: " + "x" * 2000}])), "row_text_long"),
    (raw(doc(rows=[{**ROW, "impl": "<b>mine</b>"}])), "row_impl"),
    (raw(doc(rows=[{**ROW, "dtype": "float8"}])), "row_dtype"),
    (raw(doc(rows=[{**ROW, "device": "cuda; rm -rf"}])), "row_device"),
    (raw(doc(rows=[{**ROW, "seq_len": "4096"}])), "row_size"),
    (raw(doc(rows=[{**ROW, "batch": 1.5}])), "row_size"),
    (raw(doc(rows=[{**ROW, "heads": True}])), "row_size"),
    (raw(doc(rows=[{**ROW, "seq_len": 10**12}])), "row_size"),
    (raw(doc(rows=[{**ROW, "causal": "yes"}])), "row_causal"),
    (raw(doc(rows=[{**ROW, "median_ms": "0.5"}])), "row_number"),
    (raw(doc(rows=[{**ROW, "peak_mem_bytes": 1.5}])), "row_number"),
    (raw(doc(rows=[{**ROW, "median_ms": float("nan")}])), "row_not_finite"),
    (raw(doc(rows=[{**ROW, "tflops": float("inf")}])), "row_not_finite"),
    (raw(doc(rows=[{**ROW, "p20_ms": -0.49}])), "row_negative"),
    (raw(doc(rows=[{**ROW, "median_ms": None}])), "row_no_timing"),
    (raw(doc(rows=[{**ROW, "p20_ms": 0.0, "median_ms": 0.0}])), "row_no_timing"),
    (raw(doc(rows=[{**ROW, "p20_ms": 0.6}])), "row_order"),
    (raw(doc(rows=[{**NOT_RUN, "tflops": 3.0}])), "row_numbers_not_ok"),
    (raw(doc(rows=[{**ROW, "kv_heads": 3}])), "row_kv_heads"),  # does not divide 16 heads
    (raw(doc(rows=[{**ROW, "kv_heads": "2"}])), "row_kv_heads"),
    (raw(doc(rows=[{**ROW, "kv_heads": 32}])), "row_kv_heads"),
    (raw(doc(rows=[{**ROW, "mask": "sliding"}])), "row_mask"),
    (raw(doc(rows=[{**ROW, "mask": "window:0"}])), "row_mask"),
    (raw(doc(rows=[{**ROW, "mask": "window:" + "9" * 30}])), "row_mask"),
    (raw(doc(rows=[{**ROW, "mask": "documents:3"}])), "row_mask"),  # 3 does not divide T = 4096
    (raw(doc(rows=[{**ROW, "mask": ["causal"]}])), "row_mask"),
    (raw(doc(rows=[{**ROW, "mask": "causal"}])), "row_mask_causal"),  # the row says causal is false
    (raw(doc(rows=[{**ROW, "causal": True, "mask": "window:256"}])), "row_mask_causal"),
    (raw(doc(rows=[{**ROW, "mode": "fast"}])), "row_mode"),
    (raw(doc(rows=[{**ROW, "mode": "eager: " + "x" * 2000}])), "row_text_long"),
]


@pytest.mark.parametrize("data, why", HOSTILE, ids=[f"{n}-{why}" for n, (_, why) in enumerate(HOSTILE)])
def test_hostile_files_are_refused_with_their_reason(data, why):
    assert reason(data) == why


def test_a_million_rows_never_reach_the_parser():
    row = json.dumps(ROW, separators=(",", ":")).encode()
    million = b'{"env":' + raw(ENV) + b',"results":[' + b",".join([row] * 1_000_000) + b"]}"
    assert reason(million) == "too_big"
    small = b'{"env":' + raw(ENV) + b',"results":[' + b",".join([b"{}"] * 690_000) + b"]}"
    assert len(small) <= MAX_RESULTS_FILE_BYTES and reason(small) == "too_complex"  # counted before json.loads


def test_contract_15_fields_are_read_and_older_rows_get_them_from_their_shape():
    modern = {**ROW, "impl": "flex", "kv_heads": 2, "mask": "window:4096", "mode": "eager: no C++ compiler"}
    causal = {**ROW, "causal": True, "kv_heads": None, "mask": "causal"}
    run = load_results("new.json", raw(doc(rows=[modern, causal, ROW])))
    assert [(r.kv_heads, r.mask, r.mode) for r in run.results] == [
        (2, "window:4096", "eager: no C++ compiler"),
        (16, "causal", None),
        (16, "full", None),
    ]
    assert [r.to_dict() for r in run.results][0] == {**modern, "detail": None}


def test_an_unsupported_rows_detail_is_read_bounded_and_older_rows_have_none():
    said = "Flash attention kernel not used because:; Expected query, key and value to all be of dtype: {Half}."
    new = {**NOT_RUN, "impl": "sdpa-flash", "status": "unsupported: Flash attention needs float16", "detail": said}
    old = {**NOT_RUN, "impl": "sdpa-flash", "status": f"unsupported: {said}"}
    run = load_results("new.json", raw(doc(rows=[new, old])))
    assert [(r.detail, r.full_reason) for r in run.results] == [(said, said), (None, said)]
    long = {**new, "detail": "x" * (MAX_RESULTS_DETAIL_CHARS + 1)}
    assert reason(raw(doc(rows=[long]))) == "row_text_long"
    assert reason(raw(doc(rows=[{**new, "detail": ["not", "text"]}]))) == "row_detail"
    assert reason(raw(doc(rows=[{**new, "detail": "x" * MAX_RESULTS_DETAIL_CHARS}]))) == "accepted"


def test_a_written_results_file_passes_and_the_name_is_only_a_label():
    assert reason(raw(doc()), name="../../etc/passwd") == "accepted"


# --- fuzzing ------------------------------------------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8)
JSON_ANY = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
)
FIELD_VALUES = JSON_ANY | st.sampled_from([0, -1, 1e308, float("nan"), "ok", "oom", "unsupported: x", "cuda", ""])


@st.composite
def near_files(draw) -> bytes:
    """A valid document with a few fields of rows or env replaced by anything."""
    d = json.loads(json.dumps(doc()))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["env", "row", "top"]))
        rows = d.get("results")
        if where == "env" and isinstance(d.get("env"), dict):
            d["env"][draw(st.sampled_from([*ENV, "preset", "timer_check"]))] = draw(FIELD_VALUES)
        elif where == "row" and isinstance(rows, list) and len(rows) == 2 and all(isinstance(r, dict) for r in rows):
            rows[draw(st.integers(0, 1))][draw(st.sampled_from(RESULT_KEYS))] = draw(FIELD_VALUES)
        elif where == "top":
            d[draw(st.sampled_from(["env", "results"]))] = draw(JSON_ANY)
    return raw(d)


@st.composite
def mutated_files(draw) -> bytes:
    """A valid file cut, spliced or with bytes flipped."""
    data = bytearray(raw(doc()))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(data)))
    return bytes(data[:cut]) + draw(st.binary(max_size=16))


STRATEGIES = {
    "near-valid documents": st.tuples(st.just("r.json"), near_files()),
    "mutated valid files": st.tuples(st.just("m.json"), mutated_files()),
    "any JSON": st.tuples(st.just("j.json"), JSON_ANY.map(raw)),
    "any bytes, any name": st.tuples(st.sampled_from(["r.json", "R.JSON", "r.pt", "r"]), st.binary(max_size=256)),
}
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.one_of(*STRATEGIES.values()))
def test_any_file_gives_a_run_or_a_results_error(file):
    outcome(*file)
