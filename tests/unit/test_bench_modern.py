"""Contract 15 on the CPU: masks and grouped heads in the harness, FlexAttention compiled or eager, the FLOP count,
hostile --mask values. The float64 reference is held against PyTorch's own SDPA in float64 (given the dense mask of
attnlab.masks and enable_gqa), every implementation against that reference, the FLOPs against counted mask cells;
torch.compile never runs here: its path is mocked."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import flex_attention

from attnlab import masks
from attnlab.bench import BenchConfig, ResultRow, estimated_peak_bytes, run_benchmark, sweep
from attnlab.bench import __main__ as cli
from attnlab.bench import flex as flexmod
from attnlab.bench.env import environment
from attnlab.bench.maskrule import MaskRule, parse_mask
from attnlab.bench.measure import rule_flops
from attnlab.bench.reference import reference_attention
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near

pytestmark = REFERENCE_GROUP  # eager FlexAttention imports torch._dynamo (seconds): one worker pays it
FAST = dict(warmup=0, min_reps=1, max_reps=2, min_time_s=0.0, max_time_s=0.01)
RULES = ("full", "causal", "window:5", "documents:4")
T = 16


def sweep_of(mask: str, kv_heads: int, impls: tuple[str, ...], **kw) -> list[ResultRow]:
    """Rows of one tiny float32 sweep at T = 16, 4 query heads of 8."""
    base = dict(device="cpu", seq_lens=(T,), heads=4, head_dim=8, kv_heads=kv_heads, mask=mask, impls=impls)
    config = BenchConfig(**{**base, "flex_compile": False, **FAST, **kw})
    return [ResultRow.from_dict(r) for r in run_benchmark(config)["results"]]


def torch_answer(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rule: MaskRule) -> torch.Tensor:
    """PyTorch's own float64 SDPA, given attnlab.masks' dense mask and enable_gqa: the answer we do not control."""
    mask = rule.dense(q.size(-2)) if rule.kind != "full" else None
    gqa = k.size(1) != q.size(1)
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask, enable_gqa=gqa)


@pytest.mark.parametrize("mask", RULES)
def test_the_float64_reference_is_pytorchs_answer_for_every_rule_and_grouping(mask):
    rule = parse_mask(mask)
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(2, 4, T, 8, generator=gen)
    for kv in (4, 2, 1):
        k, v = torch.randn(2, kv, T, 8, generator=gen), torch.randn(2, kv, T, 8, generator=gen)
        got = reference_attention(q, k, v, rule=None if rule.kind == "full" else rule.mask_mod(T))
        assert_near(got, torch_answer(q, k, v, rule))


@pytest.mark.parametrize("mask, kv", [(mask, 2) for mask in RULES] + [("window:5", 4)])
def test_flex_and_sdpa_agree_with_the_reference_for_every_rule_and_grouping(mask, kv):
    rows = {r.impl: r for r in sweep_of(mask, kv, ("flex", "sdpa", "sdpa-math", "explicit", "tiled"))}
    for impl, r in rows.items():
        assert r.status == "ok" and r.max_abs_err is not None and r.max_abs_err < 1e-5, (impl, r.status)
        assert (r.mask, r.kv_heads, r.causal) == (mask, kv, mask == "causal")
    assert rows["flex"].mode == "eager" and rows["sdpa"].mode is None


def test_what_cannot_run_a_case_says_why():
    rows = {r.impl: r for r in sweep_of("window:5", 2, ("mha", "sdpa-efficient", "sdpa"))}
    assert rows["mha"].unsupported_reason.startswith("nn.MultiheadAttention has one key/value head")
    assert rows["sdpa-efficient"].unsupported_reason and rows["sdpa"].ok
    mha = sweep_of("window:5", 4, ("mha",))[0]  # every head its own keys: the module takes the dense mask, inverted
    assert mha.ok and mha.max_abs_err < 1e-5


# --------------------------------------------------------------------------- compiled or eager


def test_a_working_compile_is_used_and_said(monkeypatch):
    compiled = []

    def fake_compile():
        compiled.append(1)
        return flex_attention  # what torch.compile would hand back, without building a kernel

    monkeypatch.setattr(flexmod.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(flexmod, "compile_flex", fake_compile)
    (row,) = sweep_of("window:5", 2, ("flex",), flex_compile=True)
    assert row.ok and row.mode == "compiled" and row.max_abs_err < 1e-5
    assert compiled == [1]  # once, on the probe's call: the timed calls reuse it


def test_a_machine_without_a_compiler_runs_eager_and_says_so(monkeypatch):
    monkeypatch.setattr(flexmod.shutil, "which", lambda name: None)
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(flexmod, "compile_flex", lambda: pytest.fail("no compiler: nothing may be compiled"))
    (row,) = sweep_of("causal", 4, ("flex",), flex_compile=True)
    assert row.ok and row.mode.startswith("eager: no C++ compiler (g++ is not on PATH)")
    env = environment(torch.device("cpu"), BenchConfig(device="cpu", impls=("flex",)))
    assert env["flex"]["compile"].startswith("eager: no C++ compiler")


def test_a_failed_compile_is_one_line_then_eager(monkeypatch):
    def broken():
        def call(*args, **kwargs):
            raise RuntimeError("C++ compile error\n  cc1plus: fatal error: Python.h\n\ncompilation terminated.")

        return call

    monkeypatch.setattr(flexmod.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(flexmod, "compile_flex", broken)
    (row,) = sweep_of("documents:4", 2, ("flex",), flex_compile=True)
    assert row.ok and row.max_abs_err < 1e-5  # the eager fallback measured the row
    assert row.mode == (
        "eager: torch.compile failed: RuntimeError: C++ compile error cc1plus: fatal error: Python.h "
        "compilation terminated."
    )
    assert "\n" not in row.mode and "Traceback" not in row.mode


def test_an_out_of_memory_compile_is_oom_not_a_fallback(monkeypatch):
    def no_memory():
        def call(*args, **kwargs):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

        return call

    monkeypatch.setattr(flexmod.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(flexmod, "compile_flex", no_memory)
    (row,) = sweep_of("causal", 4, ("flex",), flex_compile=True)
    assert row.status == "oom"


# ------------------------------------------------------------------------------------ FLOPs


@pytest.mark.parametrize("t, w", [(16, 5), (64, 16), (100, 1), (32, 64)])
def test_a_window_counts_its_allowed_pairs_times_4d_per_head_and_batch(t, w):
    pairs = masks.allowed_pairs(masks.build("window", t, window=w))  # counted from the mask itself
    rule = MaskRule("window", w)
    assert rule.pairs(t) == pairs
    assert rule_flops(3, 4, t, 8, rule) == 4 * 8 * pairs * 3 * 4


def test_documents_count_their_pairs_and_full_and_causal_keep_designs_count():
    docs = MaskRule("documents", 4)
    ids = docs.document_ids(32)
    assert docs.pairs(32) == masks.allowed_pairs(masks.build("documents", 32, documents=ids)) == 4 * 8 * 9 // 2
    assert rule_flops(1, 1, 32, 8, MaskRule("full")) == 4 * 8 * 32 * 32
    assert rule_flops(1, 1, 32, 8, MaskRule("causal")) == 4 * 8 * 32 * 32 / 2  # DESIGN: halved for causal


def test_a_window_rows_tflops_are_its_allowed_pairs_over_its_time():
    (row,) = sweep_of("window:5", 2, ("sdpa",))
    pairs = masks.allowed_pairs(masks.build("window", T, window=5))
    assert row.tflops * row.median_ms * 1e-3 * 1e12 == pytest.approx(4 * 8 * pairs * 1 * 4, rel=1e-9)


def test_the_memory_estimate_counts_the_dense_mask_and_repeated_keys():
    plain = estimated_peak_bytes(1, 8, 256, "float32", ("sdpa",), 16, check=False)
    window = estimated_peak_bytes(1, 8, 256, "float32", ("sdpa",), 16, check=False, mask="window:16")
    assert window - plain == 256 * 256  # one bool (T, T) mask
    for impl, extra in (("sdpa", -2 * 6), ("tiled", 2 * 2)):  # in (B, T, d) float32 tensors, one per head
        grouped = estimated_peak_bytes(1, 8, 256, "float32", (impl,), 16, check=False, kv_heads=2)
        full = estimated_peak_bytes(1, 8, 256, "float32", (impl,), 16, check=False)
        assert grouped - full == extra * 256 * 16 * 4  # k, v hold 2 heads, not 8; tiled repeats them to 8 heads


# ------------------------------------------------------------------------------ the command line


HOSTILE = [
    (["--mask", "window:0"], "window W must be 1 to"),
    (["--mask", "window:abc"], "'window:abc' is not a rule"),
    (["--mask", "documents:0"], "number of documents N must be 1 to"),
    (["--mask", "sliding"], "'sliding' is not a rule"),
    (["--mask", "window"], "window needs a size"),
    (["--mask", "window:" + "9" * 400], "400-digit number"),
    (["--mask", "window:99999999"], "must be 1 to 16777216"),
    (["--mask", "documents:3", "--seq-lens", "16"], "every T divisible by 3"),
    (["--heads", "6", "--kv-heads", "4"], "kv_heads must divide heads (6), got 4"),
    (["--kv-heads", "0"], "must be >= 1"),
    (["--causal", "--mask", "window:4"], "disagree"),
    (["--preset", "record", "--mask", "causal"], "leave out --mask"),
]


@pytest.mark.parametrize("argv, says", HOSTILE, ids=[" ".join(a)[:30] for a, _ in HOSTILE])
def test_hostile_flags_get_one_line_and_exit_2(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--device", "cpu", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and says in err
    assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 400


def test_the_cli_writes_contract_15s_rows(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["--device", "cpu", "--seq-lens", "16,32", "--heads", "4", "--head-dim", "8", "--kv-heads", "2"]
    argv += ["--mask", "window:5", "--impls", "flex,sdpa", "--flex-eager", "--no-progress", "--out", str(out)]
    argv += ["--warmup", "0", "--min-reps", "1", "--max-reps", "1", "--min-time", "0"]
    assert cli.main(argv) == 0
    rows = json.loads(out.read_text())["results"]
    assert [(r["impl"], r["seq_len"], r["kv_heads"], r["mask"], r["causal"]) for r in rows] == [
        (i, t, 2, "window:5", False) for t in (16, 32) for i in ("flex", "sdpa")
    ]
    assert all(r["status"] == "ok" and r["max_abs_err"] < 1e-5 for r in rows)
    table = capsys.readouterr().err
    assert "window:5" in table and "4/2" in table and "ok (eager)" in table


def test_a_documents_sweep_refuses_a_length_it_cannot_cut():
    with pytest.raises(ValueError, match="divisible by 4"):
        BenchConfig(device="cpu", seq_lens=(16, 18), mask="documents:4")
    config = BenchConfig(device="cpu", seq_lens=(16,), heads=4, kv_heads=2, mask="documents:4")
    case = sweep.build_case(torch.device("cpu"), "float32", 16, config)
    assert case.k.shape == (1, 2, 16, 64) and case.dense().sum() == 4 * 4 * 5 // 2
