"""The benchmark harness and CLI: schema, every status value, progress, recorded-results loading."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import torch

from attnlab.bench import (
    IMPLS,
    MATRIX_COPIES,
    MEMORY_CAP_BYTES,
    RESULT_KEYS,
    BenchConfig,
    ResultRow,
    attention_flops,
    attention_matrix_bytes,
    estimated_peak_bytes,
    format_bytes,
    impls,
    known_peak_tflops,
    load_recorded,
    measure,
    memory_cap_message,
    over_memory_cap,
    peak_share,
    reference,
    reference_attention,
    resolve_device,
    run_benchmark,
    sweep,
    time_call,
    validate_document,
)
from attnlab.bench import __main__ as cli
from attnlab.bench.reasons import distil
from attnlab.limits import BUSY_OTHER_CORES
from tests.conftest import FRESH_GROUP
from tests.fresh import FAST_ARGS, answer

ROOT = Path(__file__).resolve().parents[2]
HAS_CUDA = torch.cuda.is_available()
FAST = {"warmup": 1, "min_reps": 2, "max_reps": 3, "min_time_s": 0.0}


def tiny(**kw) -> BenchConfig:
    """A sweep small enough to run in well under a second per row on a shared CPU."""
    base = {"device": "cpu", "seq_lens": (16,), "heads": 2, "head_dim": 8, "batch": 1, "flex_compile": False, **FAST}
    return BenchConfig(**{**base, **kw})


def by_impl(doc: dict) -> dict[str, dict]:
    """impl -> row, for a single (dtype, T) sweep."""
    return {r["impl"]: r for r in doc["results"]}


def check_schema(doc: dict) -> None:
    """Exactly the contract's keys on every row, and an env that names where it ran."""
    assert set(doc) == {"env", "results"}
    for key in ("torch", "device_name", "cuda", "date", "python", "platform", "peak_tflops"):
        assert key in doc["env"]
    for row in doc["results"]:
        assert list(row) == list(RESULT_KEYS)
        assert row["status"] in ("ok", "oom") or row["status"].startswith("unsupported: ")
    assert validate_document(doc) == []


# ------------------------------------------------------------------------------------- CLI


def test_cli_writes_the_contract_schema_on_cpu(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["--device", "cpu", "--dtype", "float32,float64", "--seq-lens", "8,24", "--heads", "2"]
    argv += ["--head-dim", "4", "--batch", "2", "--causal", "--flex-eager", "--out", str(out), *FAST_ARGS]
    assert cli.main(argv) == 0
    doc = json.loads(out.read_text())
    check_schema(doc)
    assert len(doc["results"]) == 2 * 2 * len(IMPLS)
    assert {(r["dtype"], r["seq_len"]) for r in doc["results"]} == {
        (d, t) for d in ("float32", "float64") for t in (8, 24)
    }
    assert all(r["causal"] and r["batch"] == 2 and r["device"] == "cpu" for r in doc["results"])
    rows = [r for r in doc["results"] if r["impl"] in ("explicit", "flex")]
    assert all(r["status"] == "ok" and r["max_abs_err"] < 1e-5 for r in rows)
    assert all(r["mask"] == "causal" and r["kv_heads"] == 2 for r in doc["results"])
    assert {r["mode"] for r in rows} == {None, "eager"}  # flex says how it ran; the others have no mode
    assert "median ms" in capsys.readouterr().err  # the summary table


@FRESH_GROUP
def test_cli_as_a_module_in_a_fresh_process(fresh_answers):
    """`python -m attnlab.bench` in a fresh interpreter (tests/fresh.py) writes a file of the contract's schema."""
    ran = answer(fresh_answers, "bench_as_a_module")
    assert ran["exit"] == 0
    check_schema(ran["doc"])
    assert [r["impl"] for r in ran["doc"]["results"]] == ["sdpa", "tiled"]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--impls", "sdpa,bogus"], "bogus"),
        (["--dtype", "float8"], "float8"),
        (["--seq-lens", "0,16"], "positive"),
        (["--heads", "-1"], ">= 1"),
    ],
)
def test_cli_refuses_bad_flags_with_a_message(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--device", "cpu", *argv])
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


@pytest.mark.skipif(HAS_CUDA, reason="checks the message given when CUDA is missing")
def test_cuda_without_cuda_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--device", "cuda", "--seq-lens", "8"])
    assert exc.value.code == 2
    assert "torch.cuda.is_available() is False" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="cuda"):
        resolve_device("cuda")


def test_auto_device_picks_cuda_exactly_when_present():
    assert resolve_device("auto").type == ("cuda" if HAS_CUDA else "cpu")


# ------------------------------------------------------------------------------- statuses


def test_statuses_ok_and_unsupported_on_cpu():
    doc = run_benchmark(tiny(dtypes=("float32",)))
    check_schema(doc)
    rows = by_impl(doc)
    for impl in ("explicit", "tiled", "sdpa", "sdpa-math", "sdpa-flash", "flex", "mha"):
        row = rows[impl]
        assert row["status"] == "ok", row
        assert row["p20_ms"] <= row["median_ms"] <= row["p80_ms"]
        assert row["tflops"] > 0 and row["max_abs_err"] < 1e-5
        assert row["peak_mem_bytes"] > 0  # measured: the CPU profiler sees every call allocate its output
    for impl in ("sdpa-efficient", "sdpa-cudnn"):  # no such CPU kernels: the reason in one sentence, PyTorch's apart
        row = rows[impl]
        assert row["status"] == f"unsupported: {distil(impl, row['detail'], 'cpu').sentence}"
        assert "CPU implementation" in row["status"] and "Triggered" not in row["status"]
        assert "No viable backend" in row["detail"] or "not used because" in row["detail"]
        assert row["median_ms"] is None and row["tflops"] is None


def test_forced_backend_never_falls_back(monkeypatch):
    """The timed call of sdpa-efficient runs inside sdpa_kernel: on CPU it must fail, not time math."""
    case = sweep.build_case(torch.device("cpu"), "float32", 8, tiny())
    call, ctx = impls.make_call("sdpa-efficient", case, tiny())
    with ctx, pytest.raises(RuntimeError):
        call()


def test_oom_is_recorded_and_the_run_goes_on(monkeypatch):
    real = impls.make_call

    def fake(impl, case, config):
        if impl == "explicit":

            def boom():
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")

            return boom, contextlib.nullcontext()
        if impl == "tiled":  # the CPU allocator's wording

            def cpu_boom():
                raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 9 bytes")

            return cpu_boom, contextlib.nullcontext()
        return real(impl, case, config)

    monkeypatch.setattr(measure, "make_call", fake)
    doc = run_benchmark(tiny(impls=("explicit", "tiled", "sdpa"), seq_lens=(8, 16)))
    check_schema(doc)
    statuses = [(r["impl"], r["seq_len"], r["status"]) for r in doc["results"]]
    assert statuses == [
        ("explicit", 8, "oom"),
        ("tiled", 8, "oom"),
        ("sdpa", 8, "ok"),
        ("explicit", 16, "oom"),
        ("tiled", 16, "oom"),
        ("sdpa", 16, "ok"),
    ]
    assert all(r["median_ms"] is None for r in doc["results"] if r["status"] == "oom")


def test_oom_while_building_inputs_marks_the_whole_point(monkeypatch):
    real = sweep.build_case

    def fake(device, dtype_name, t, config):
        if t == 32:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(device, dtype_name, t, config)

    monkeypatch.setattr(sweep, "build_case", fake)
    doc = run_benchmark(tiny(impls=("sdpa", "tiled"), seq_lens=(32, 8)))
    assert [(r["seq_len"], r["status"]) for r in doc["results"]] == [
        (32, "oom"),
        (32, "oom"),
        (8, "ok"),
        (8, "ok"),
    ]


def test_other_errors_are_not_swallowed_as_oom(monkeypatch):
    monkeypatch.setattr(measure, "_peak_memory_cpu", lambda call: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        run_benchmark(tiny(impls=("sdpa",)))


def test_mha_off_its_fast_path_is_reported_not_timed():
    doc = run_benchmark(tiny(impls=("mha",), heads=3))  # odd head count: no fused kernel
    (row,) = doc["results"]
    assert row["status"].startswith("unsupported: ") and "fast path" in row["status"]


def test_progress_callback_sees_every_row():
    seen = []
    config = tiny(impls=("sdpa", "tiled"), seq_lens=(8, 16), dtypes=("float32", "float64"))
    doc = run_benchmark(config, on_progress=lambda done, total, row: seen.append((done, total, row)))
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert {s[1] for s in seen} == {config.total} == {8}
    assert [s[2].to_dict() for s in seen] == doc["results"]


def test_threads_are_restored_after_the_run():
    before = torch.get_num_threads()
    doc = run_benchmark(tiny(impls=("sdpa",), threads=1))
    assert doc["env"]["cpu_threads"] == 1
    assert torch.get_num_threads() == before


def test_a_run_records_how_busy_the_machine_was_otherwise():
    load = run_benchmark(tiny(impls=("sdpa",), threads=1))["env"]["machine_load"]
    assert 0.0 <= load["other_busy_cores"] <= load["cores"] and load["window_s"] > 0
    assert load["busy"] == (load["other_busy_cores"] >= BUSY_OTHER_CORES) and "/proc/stat" in load["method"]


@pytest.mark.parametrize(
    "bad",
    [{"impls": ("nope",)}, {"dtypes": ("int8",)}, {"seq_lens": (0,)}, {"heads": 0}, {"device": "tpu"}],
)
def test_config_refuses_nonsense(bad):
    with pytest.raises(ValueError):
        tiny(**bad)


# ---------------------------------------------------------------------------- the numbers


def test_flops_and_peaks():
    assert attention_flops(2, 8, 1024, 1024, 64, False) == 4 * 2 * 8 * 1024 * 1024 * 64
    assert attention_flops(2, 8, 1024, 1024, 64, True) == 2 * 2 * 8 * 1024 * 1024 * 64
    assert known_peak_tflops("NVIDIA H100 80GB HBM3", "bfloat16") == pytest.approx(989.4)
    assert known_peak_tflops("NVIDIA H200", "float32") == pytest.approx(66.9)
    assert known_peak_tflops("NVIDIA H100 PCIe", "float16") == pytest.approx(756.0)
    assert known_peak_tflops("Tesla T4", "float16") == pytest.approx(65.0)  # Colab's free GPU
    assert known_peak_tflops("Tesla T4", "bfloat16") is None  # no bfloat16 tensor cores: no share, never a guess
    assert known_peak_tflops("CPU: AMD EPYC", "float32") is None
    assert known_peak_tflops("Some Future GPU", "float16") is None
    env = {"peak_tflops": {"bfloat16": 1000.0}}
    assert peak_share("bfloat16", 250.0, env) == pytest.approx(0.25)
    assert peak_share("float32", 1.0, env) is None and peak_share("bfloat16", None, env) is None


def test_chunked_reference_equals_full_softmax(monkeypatch):
    monkeypatch.setattr(reference, "REFERENCE_CHUNK_BYTES", 200)  # a few rows per chunk
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 13, 5, generator=gen) for _ in range(3))
    for causal in (False, True):
        want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
        torch.testing.assert_close(reference_attention(q, k, v, causal), want)


def test_time_call_honours_repetition_bounds():
    calls = []
    config = tiny(warmup=2, min_reps=4, max_reps=6, min_time_s=0.0)
    times = time_call(lambda: calls.append(1), torch.device("cpu"), config)
    assert len(times) == 4 and len(calls) == 4 + 1  # warm-up stops once min_time_s (0) is reached
    config = tiny(warmup=0, min_reps=1, max_reps=5, min_time_s=10.0)
    assert len(time_call(lambda: None, torch.device("cpu"), config)) == 5


def test_cpu_peak_memory_tracks_the_t_squared_matrix():
    doc = run_benchmark(tiny(impls=("explicit", "tiled"), seq_lens=(512,), heads=1, head_dim=16))
    rows = by_impl(doc)
    matrix = attention_matrix_bytes(1, 1, 512, 512, "float32")
    assert rows["explicit"]["peak_mem_bytes"] >= matrix  # it holds several T x T tensors
    assert rows["tiled"]["peak_mem_bytes"] < matrix  # tiles only


def test_memory_cap_helpers():
    assert MEMORY_CAP_BYTES == 512 * 2**20
    assert attention_matrix_bytes(1, 8, 1024, 512, torch.float16) == 8 * 1024 * 512 * 2
    assert attention_matrix_bytes(2, 4, 100, 100, "float64") == 2 * 4 * 100 * 100 * 8
    inputs = 3 * 8 * 2048 * 64 * 4
    assert estimated_peak_bytes(1, 8, 2048, "float32") == inputs + attention_matrix_bytes(1, 8, 2048, 2048, "float32")
    assert not over_memory_cap(1, 8, 2048, "float32")  # one 128 MiB matrix and the inputs fit
    assert over_memory_cap(1, 8, 8192, "float32")  # one 2 GiB matrix does not
    assert memory_cap_message(1, 8, 1024, "float32") is None
    msg = memory_cap_message(1, 8, 8192, "float32")
    assert "512.0 MiB" in msg and "2.0 GiB" in msg and "8192" in msg
    with pytest.raises(ValueError, match="unknown dtype"):
        attention_matrix_bytes(1, 1, 1, 1, "float8")
    # the explicit path keeps every stage, so it is refused sooner than flash-style kernels
    assert not over_memory_cap(1, 8, 1024, "float32", impls=("tiled", "sdpa"))
    assert over_memory_cap(1, 8, 2048, "float32", impls=("explicit",))
    explicit_msg = memory_cap_message(1, 8, 2048, "float32", impls=("explicit", "sdpa"))
    need = estimated_peak_bytes(1, 8, 2048, "float32", ("explicit", "sdpa"))
    assert "128.0 MiB" in explicit_msg and format_bytes(need) in explicit_msg and "512.0 MiB" in explicit_msg


def test_the_estimate_counts_what_mha_and_the_reference_allocate():
    # nn.MultiheadAttention holds four (E, E) projections; at E = 32 * 128 they, not the T x T matrix, dominate
    # (a run the old matrix-only estimate accepted grew the server by about 0.9 GB: scripts/bench_memory.py)
    matrix_only = 2 * attention_matrix_bytes(1, 32, 256, 256, "float32")
    assert matrix_only < MEMORY_CAP_BYTES / 10
    assert over_memory_cap(1, 32, 256, "float32", impls=("mha",), head_dim=128)
    assert not over_memory_cap(1, 32, 256, "float32", impls=("sdpa", "tiled"), head_dim=128)
    with_check = estimated_peak_bytes(1, 8, 1024, "float32", ("sdpa",))
    assert with_check > estimated_peak_bytes(1, 8, 1024, "float32", ("sdpa",), check=False)


def test_result_row_defines_the_schema_once():
    row = ResultRow("sdpa", "cpu", "float32", 1, 2, 16, 8, False, 1.0, 0.9, 1.1, 0.5, 1024, 1e-7, "ok")
    assert tuple(row.to_dict()) == RESULT_KEYS and ResultRow.from_dict(row.to_dict()) == row
    assert (
        row.ok
        and ResultRow("mha", "cpu", "float32", 1, 2, 16, 8, False, status="unsupported: why").unsupported_reason
        == "why"
    )


def test_matrix_copies_cover_what_the_profiler_measures():
    doc = run_benchmark(tiny(impls=tuple(MATRIX_COPIES), seq_lens=(256,), heads=2, head_dim=16))
    matrix = attention_matrix_bytes(1, 2, 256, 256, "float32")
    for row in doc["results"]:
        assert row["peak_mem_bytes"] <= MATRIX_COPIES[row["impl"]] * matrix, row


# ------------------------------------------------------------------------ recorded results


def test_load_recorded_keeps_valid_files_and_skips_malformed(tmp_path):
    doc = run_benchmark(tiny(impls=("sdpa", "sdpa-cudnn")))
    (tmp_path / "a-good.json").write_text(json.dumps(doc))
    (tmp_path / "b-not-json.json").write_text("{nope")
    (tmp_path / "c-no-env.json").write_text(json.dumps({"results": doc["results"]}))
    broken = json.loads(json.dumps(doc))
    del broken["results"][0]["median_ms"]
    (tmp_path / "d-missing-key.json").write_text(json.dumps(broken))
    bad_status = json.loads(json.dumps(doc))
    bad_status["results"][0]["status"] = "fast"
    (tmp_path / "e-bad-status.json").write_text(json.dumps(bad_status))
    invented = json.loads(json.dumps(doc))
    invented["results"][0]["median_ms"] = "about 3"
    (tmp_path / "f-text-number.json").write_text(json.dumps(invented))
    (tmp_path / "notes.txt").write_text("ignored")
    runs, skipped = load_recorded(tmp_path)
    assert [r.name for r in runs] == ["a-good.json"]
    assert [r.to_dict() for r in runs[0].results] == doc["results"] and "torch" in runs[0].label
    assert [str(s).split(":")[0] for s in skipped] == [
        "b-not-json.json",
        "c-no-env.json",
        "d-missing-key.json",
        "e-bad-status.json",
        "f-text-number.json",
    ]


def test_shipped_results_directory_is_valid():
    runs, skipped = load_recorded()
    assert skipped == []
    assert all(run.env["device"] == "cuda" for run in runs)  # only numbers measured on a GPU ship as GPU data


# ------------------------------------------------------------------------------------ CUDA


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_cuda_rows_are_timed_with_memory_and_errors():
    config = BenchConfig(device="cuda", dtypes=("float16", "float32"), seq_lens=(128,), heads=2, head_dim=64, **FAST)
    doc = run_benchmark(config)
    check_schema(doc)
    assert doc["env"]["device"] == "cuda" and doc["env"]["cuda"] and "capability" in doc["env"]
    for row in doc["results"]:
        if row["status"] == "ok":
            assert row["median_ms"] > 0 and row["peak_mem_bytes"] > 0
            assert row["max_abs_err"] < (5e-3 if row["dtype"] == "float16" else 1e-4)
    ok = {(r["impl"], r["dtype"]) for r in doc["results"] if r["status"] == "ok"}
    assert {("explicit", "float16"), ("sdpa", "float16"), ("sdpa-math", "float32")} <= ok


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_cuda_flash_refuses_float64_with_pytorchs_reason():
    config = BenchConfig(device="cuda", dtypes=("float64",), seq_lens=(64,), impls=("sdpa-flash",), **FAST)
    (row,) = run_benchmark(config)["results"]
    assert row["status"].startswith("unsupported: ")
    assert "dtype" in row["status"].lower() or "flash" in row["status"].lower()


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_cuda_oom_is_recorded_and_memory_is_given_back():
    free, _total = torch.cuda.mem_get_info()
    t = int((free / (2 * 4)) ** 0.5) * 2  # one fp32 T x T matrix per head already exceeds free memory
    config = BenchConfig(
        device="cuda", seq_lens=(t, 64), heads=2, head_dim=16, impls=("explicit",), check=False, **FAST
    )
    rows = run_benchmark(config)["results"]
    assert [r["status"] for r in rows] == ["oom", "ok"]
