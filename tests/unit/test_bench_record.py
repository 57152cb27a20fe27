"""The record preset (contract 11): its plan on described devices, the dry run end to end, the CLI's refusals."""

from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import replace

import pytest
import torch

from attnlab.bench import __main__ as cli
from attnlab.bench import plan as planning
from attnlab.bench import record
from attnlab.bench.config import BenchConfig
from attnlab.bench.measure import mha_projection_flops, time_call
from attnlab.bench.plan import DeviceSpec, gpu_spec, harness_calls, make_plan
from attnlab.bench.record import DRY_RUN, MODERN_IMPLS, RECORD, RECORD_IMPLS
from attnlab.bench.results import load_results
from attnlab.bench.row import RESULT_KEYS

H100 = gpu_spec("NVIDIA H100 80GB HBM3", 80 * 2**30)
T4 = gpu_spec("Tesla T4", 15 * 2**30)
EXTRA_ROWS = 6 * (len(MODERN_IMPLS) * 2 + 1)  # T x (window and grouped rows for flex and SDPA, flex at kv = H)
GRID_ROWS = 3 * 2 * 2 * 6 * len(RECORD_IMPLS) + EXTRA_ROWS  # dtypes x head dims x masks x T x implementations


def plan_for(spec: DeviceSpec, **kw):
    return make_plan(RECORD.configs("cuda"), spec, RECORD.budget_s, **kw)


def test_the_record_grid_is_the_headline_sweep():
    configs = RECORD.configs("cuda")
    main, extra = configs[:4], configs[4:]
    assert {(c.head_dim, c.causal) for c in main} == {(64, False), (64, True), (128, False), (128, True)}
    assert all(c.dtypes == ("float16", "bfloat16", "float32") and max(c.seq_lens) == 16384 for c in main)
    assert all(c.heads * c.head_dim == 2048 and c.flex_compile for c in configs)
    assert all(c.kv_heads == c.heads and c.mask in ("full", "causal") for c in main)
    assert set(RECORD_IMPLS) >= {"explicit", "tiled", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn"}
    # contract 15: a 4096 window and 8 query heads per key/value head, for flex and SDPA, in bfloat16 at d = 128
    assert {(c.mask, c.heads // c.kv_heads, c.impls) for c in extra} == {
        ("window:4096", 1, MODERN_IMPLS),
        ("causal", 8, MODERN_IMPLS),
        ("causal", 1, ("flex",)),  # flex at every head its own keys, beside the grid's SDPA rows
    }
    assert all(c.dtypes == ("bfloat16",) and c.head_dim == 128 and c.seq_lens == RECORD.seq_lens for c in extra)
    assert {"flex", "sdpa", "sdpa-efficient", "sdpa-cudnn"} <= set(MODERN_IMPLS)


def test_on_an_h100_the_plan_keeps_every_fused_row_and_fits_the_budget():
    plan = plan_for(H100)
    assert plan.rows == GRID_ROWS and plan.estimate_s <= RECORD.budget_s <= 600
    left = plan.left_out()
    oom = [x for x in left if x["why"].startswith("oom: foreseen")]
    assert {x["impl"] for x in oom} <= {"explicit", "sdpa-math"} and all("GiB" in x["why"] for x in oom)  # T x T
    timed = [(x["impl"], x["dtype"], x["seq_len"]) for x in left if x not in oom]
    assert timed == [("tiled", "float32", 16384)]  # the slowest path at its longest, the one row past the budget
    mha = {(p.dtype, p.config.head_dim, p.config.mask, p.seq_len) for p in plan.points if "mha" in p.measured}
    assert len(mha) == 3 * 2 * 2 * 6  # nn.MultiheadAttention in every dtype, head size, mask and T
    measured = {(p.dtype, p.config.head_dim, p.seq_len) for p in plan.points if "sdpa-flash" in p.measured}
    assert ("bfloat16", 128, 16384) in measured and not plan.unchecked
    explicit = {(p.dtype, p.seq_len) for p in plan.points if "explicit" in p.measured}
    assert ("float16", 4096) in explicit and ("float32", 16384) not in explicit
    modern = [(p, i) for p in plan.points if p.config.mask == "window:4096" or p.config.kv_heads == 2 for i in p.impls]
    assert len(modern) == 6 * 2 * len(MODERN_IMPLS) and all(i in p.measured for p, i in modern)  # every one, to 16k
    assert plan.estimate_s >= 3 * planning.FLEX_COMPILE_S["cuda"]  # three flex compiles counted: window, 2 and 16 kv


def test_the_plan_counts_one_flex_compile_per_family_and_never_loses_it():
    one = BenchConfig(device="cuda", dtypes=("bfloat16",), seq_lens=(512, 1024), heads=16, head_dim=128,
                      mask="window:256", impls=("flex",))  # fmt: skip
    other = replace(one, mask="causal")
    compile_s = planning.FLEX_COMPILE_S["cuda"]
    alone = make_plan([one], H100, 600.0).estimate_s
    assert compile_s < alone < compile_s + 1.0  # one compile serves both lengths; the rows themselves are quick
    assert make_plan([one, other], H100, 600.0).estimate_s == pytest.approx(2 * alone, rel=0.01)  # two families
    tight = make_plan([one], H100, compile_s - 1.0)  # no room for the compile: no flex row may stay without it
    assert not any("flex" in p.measured for p in tight.points) and tight.estimate_s == 0.0


def test_sdpa_given_a_dense_mask_is_costed_whole_and_flex_only_the_blocks_it_touches():
    kw = dict(device="cuda", dtypes=("bfloat16",), heads=16, head_dim=128, batch=2)
    window = BenchConfig(mask="window:4096", **kw)
    full = BenchConfig(**kw)
    t = 16384
    assert planning.call_seconds("sdpa-efficient", H100, window, "bfloat16", t) > planning.call_seconds(
        "sdpa-efficient", H100, full, "bfloat16", t
    )  # the full T^2, and the mask read on top
    assert planning.call_seconds("flex", H100, window, "bfloat16", t) < 0.5 * planning.call_seconds(
        "flex", H100, full, "bfloat16", t
    )  # a 4096 window keeps under half of 16k x 16k


def test_mha_is_costed_as_its_projections_around_the_fused_attention_and_its_own_reference():
    kw = dict(device="cuda", dtypes=("bfloat16",), heads=16, head_dim=128, batch=2)
    full, causal = BenchConfig(**kw), BenchConfig(mask="causal", **kw)
    t = 8192
    sdpa, mha = (planning.call_seconds(i, H100, full, "bfloat16", t) for i in ("sdpa", "mha"))
    projections = mha_projection_flops(2, t, 2048) / (planning.MATMUL_EFFICIENCY * 989.4e12)
    assert mha == pytest.approx(sdpa + projections + 6 * H100.launch_s, rel=1e-6)  # and its few launches
    assert planning.call_seconds("mha", H100, causal, "bfloat16", t) > mha  # a dense causal mask: nothing skipped
    row = planning.row_seconds("mha", H100, full, "bfloat16", t)
    assert row > planning.row_seconds("sdpa", H100, full, "bfloat16", t) + planning.mha_reference_seconds(H100, full, t)
    assert planning.linear("mha", H100) and not planning.linear("mha", planning.describe(torch.device("cpu")))


def test_on_a_t4_the_sweep_shrinks_and_says_why():
    plan = plan_for(T4)
    assert plan.rows == GRID_ROWS  # every row is still written, measured or not
    assert plan.estimate_s <= RECORD.budget_s
    why = Counter(x["why"].split(":")[0] for x in plan.left_out())
    assert why["oom"] > len(plan_for(H100).left_out())  # less memory: more left out for it
    timed_out = [x for x in plan.left_out() if "left out by the record plan" in x["why"]]
    assert timed_out and all(x["why"].startswith("unsupported: ") and "T4" in x["why"] for x in timed_out)
    assert plan.unchecked  # its float64 rate is too slow for a reference at 16k: those points run unchecked
    assert all(not p.config.check for p in plan.points if p.seq_len == 16384)
    sixteen_k = [p for p in plan.points if p.seq_len == 16384 and p.dtype == "float16"]
    assert any("sdpa-flash" in p.measured for p in sixteen_k)  # the flash kernels still reach 16k


def test_device_descriptions_take_datasheet_peaks_and_plan_an_unknown_gpu_low():
    assert H100.tflops["bfloat16"] == 989.4 and H100.memory_bytes < 80 * 2**30  # the context and cache keep some
    unknown = gpu_spec("Some Future GPU", 24 * 2**30)
    assert unknown.tflops == planning.UNKNOWN_GPU[0] and unknown.bandwidth_gbs == planning.UNKNOWN_GPU[1]
    assert plan_for(unknown).estimate_s <= RECORD.budget_s
    cpu = planning.describe(torch.device("cpu"))
    assert cpu.kind == "cpu" and cpu.memory_bytes > 0 and cpu.tflops == planning.CPU_TFLOPS


def test_a_dtype_the_device_cannot_run_is_unsupported_on_every_row():
    plan = plan_for(T4, unrunnable={"bfloat16": "bfloat16 cannot run on this device: no"})
    rows = [(p, i) for p in plan.points if p.dtype == "bfloat16" for i in p.impls]
    assert rows and all(p.skip[i] == "unsupported: bfloat16 cannot run on this device: no" for p, i in rows)


def test_the_plan_counts_the_calls_the_harness_makes():
    for timing in ({"warmup": 3, "min_reps": 5, "max_reps": 9, "min_time_s": 0.0}, RECORD.timing, DRY_RUN.timing):
        config = BenchConfig(device="cpu", **{**RECORD.timing, **timing})
        config = replace(config, min_time_s=0.0, max_time_s=0.0)
        calls: list[int] = []
        time_call(functools.partial(calls.append, 1), torch.device("cpu"), config)
        assert harness_calls(0.0, config) == len(calls) + 2
    slow = BenchConfig(device="cpu", **RECORD.timing)
    assert harness_calls(2.0, slow) == 2 + 1 + 3  # one warm-up, three repetitions past max_time_s
    assert harness_calls(1e-6, slow) == 2 + 3 + slow.max_reps


def test_the_dry_run_writes_the_whole_grid_through_the_cli(tmp_path, capsys):
    out = tmp_path / "dry.json"
    assert cli.main(["--preset", "record", "--dry-run", "--out", str(out)]) == 0
    data = out.read_bytes()
    doc = json.loads(data)
    env, rows = doc["env"], doc["results"]
    assert env["device"] == "cpu" and env["preset"]["dry_run"] and env["preset"]["name"] == "record"
    assert env["cpu_threads"] == 1 and {"torch", "cuda", "date", "device_name", "peak_tflops"} <= set(env)
    assert 0.0 <= env["machine_load"]["other_busy_cores"] <= env["machine_load"]["cores"]  # how busy, around the sweep
    want = {(d, h, h and "causal" if c else "full", 32 // h, t, i) for d in DRY_RUN.dtypes for h in DRY_RUN.head_dims
            for c in (False, True) for t in DRY_RUN.seq_lens for i in RECORD_IMPLS}  # fmt: skip
    want |= {("bfloat16", 16, x.mask, 2 // x.group, t, i) for x in DRY_RUN.extras for t in DRY_RUN.seq_lens
             for i in x.impls}  # fmt: skip
    got = {(r["dtype"], r["head_dim"], r["mask"], r["kv_heads"], r["seq_len"], r["impl"]) for r in rows}
    assert got == want and len(rows) == len(want) and all(list(r) == list(RESULT_KEYS) for r in rows)
    ok = [r for r in rows if r["status"] == "ok"]
    assert {r["impl"] for r in ok} >= {"explicit", "tiled", "sdpa", "sdpa-math", "flex", "mha"}
    assert all(r["median_ms"] > 0 and r["max_abs_err"] is not None for r in ok)
    flex = [r for r in rows if r["impl"] == "flex"]
    assert flex and all(r["status"] == "ok" and r["mode"] == "eager" for r in flex)  # a dry run never compiles
    assert {r["mask"] for r in flex} == {"window:8", "causal"} and {r["kv_heads"] for r in flex} == {1, 2}
    check = env["timer_check"]
    assert check["attnlab_ms"] > 0 and check["torch_benchmark_ms"] > 0
    assert check["ratio"] == pytest.approx(check["attnlab_ms"] / check["torch_benchmark_ms"])
    assert env["plan"]["left_out"] == [] and env["plan"]["estimated_s"] <= DRY_RUN.budget_s
    assert load_results("dry.json", data).env["device_name"] == env["device_name"]  # the page reads it back
    err = capsys.readouterr().err
    assert "record plan for CPU" in err and "median ms" in err


def test_a_small_device_records_what_it_left_out(monkeypatch):
    tiny = DeviceSpec("cpu", "a 1 MiB device", 2**20, dict(planning.CPU_TFLOPS), 10.0, 5e-6)
    monkeypatch.setattr(record, "describe", lambda device: tiny)
    monkeypatch.setattr(record, "dtype_problems", lambda device, dtypes: {"float16": "float16 cannot run: test"})
    grid = replace(DRY_RUN, dtypes=("float16", "float32"), head_dims=(8,), seq_lens=(16, 256), masks=(False,))
    doc = record.run_record(grid, torch.device("cpu"), dry_run=True, threads=1)
    status = {(r["dtype"], r["seq_len"], r["impl"]): r["status"] for r in doc["results"]}
    assert all(s.startswith("unsupported: float16 cannot run") for (d, _, _), s in status.items() if d == "float16")
    assert status[("float32", 256, "explicit")] == "oom"  # nine 256 x 256 x 4 heads matrices pass 1 MiB
    assert status[("float32", 16, "sdpa")] == "ok"
    left = {(x["dtype"], x["seq_len"], x["impl"]): x["why"] for x in doc["env"]["plan"]["left_out"]}
    assert left[("float32", 256, "explicit")].startswith("oom: foreseen, needs about")
    assert doc["env"]["timer_check"]["dtype"] == "float32"  # the check moved off the dtype that cannot run


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--preset", "fastest"], "invalid choice: 'fastest'"),
        (["--dry-run"], "go with --preset record"),
        (["--preset", "record", "--dtype", "float16"], "leave out --dtype"),
        (["--preset", "record", "--seq-lens", "8", "--causal"], "leave out --seq-lens, --causal"),
        (["--preset", "record", "--budget-s", "-5"], "--budget-s must be a positive"),
    ],
)
def test_bad_preset_flags_get_one_line_and_exit_2(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message given when CUDA is missing")
def test_the_preset_on_a_missing_gpu_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--preset", "record", "--device", "cuda"])
    assert exc.value.code == 2 and "torch.cuda.is_available() is False" in capsys.readouterr().err


def test_a_dtype_the_device_cannot_run_is_refused_by_the_plain_cli(monkeypatch, capsys):
    monkeypatch.setattr(cli, "dtype_problems", lambda device, dtypes: {"bfloat16": "bfloat16 cannot run here: x"})
    with pytest.raises(SystemExit) as exc:
        cli.main(["--device", "cpu", "--dtype", "bfloat16", "--seq-lens", "8"])
    assert exc.value.code == 2 and "bfloat16 cannot run here: x" in capsys.readouterr().err
    assert record.dtype_problems(torch.device("cpu"), ("float32", "bfloat16")) == {}


def test_an_unwritable_out_is_one_line_and_exit_1(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = ["--device", "cpu", "--seq-lens", "8", "--heads", "1", "--head-dim", "4", "--impls", "sdpa"]
    argv += ["--warmup", "0", "--min-reps", "1", "--max-reps", "1", "--min-time", "0", "--no-progress"]
    assert cli.main([*argv, "--out", str(blocker / "r.json")]) == 1
    assert "cannot write" in capsys.readouterr().err
