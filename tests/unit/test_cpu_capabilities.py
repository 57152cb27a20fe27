"""The float tests again as another CPU runs them: ATen's portable code, and MKL's generic kernels a capability down.

A CPU sums a float32 dot product in the order its kernels take: AVX-512, AVX2 and ATen's portable code
(`ATEN_CPU_CAPABILITY`) each take another, and so does MKL for the CPU it finds (`MKL_CBWR=COMPATIBLE` picks its
generic kernels). Issue 57: three tests held on the machine they were written on and failed on an AMD EPYC by one ulp
of the numbers compared. So the modules that compare two computations of the same floats run again here, one process
per variant:

- ATen's portable code (DEFAULT), alone;
- where torch uses MKL, MKL's generic kernels under the next capability below this machine's own: AVX2 on an AVX-512
  machine, the order of an AVX2 machine whose MKL takes its generic path (this machine's own capability where there
  is none between);
- without MKL, that next capability alone.

DEFAULT never runs with MKL's generic kernels where there is another capability to pair them with: on the tree of
issue 57, DEFAULT failed the language-model tests (as the EPYC did) and MKL's generic kernels passed them, while those
kernels alone failed the patching shares, which DEFAULT passed; one process with both failed only the patching
shares. Under AVX2, MKL's generic kernels fail the same six patching-share tests as alone (the tree of issue 57 on an
AVX-512 Xeon), so an AVX-512 machine runs two processes rather than three (AVX2, DEFAULT and MKL each alone: the
third process was 14-25 s of the 4-minute suite).

That is two extra runs of about 15-25 CPU-seconds each, with 25 examples a hypothesis property rather than 100 (the
profile "pass": tests/examples.py). The few modules left out say why in OUTSIDE (each costs more in loading its
references than its float paths are worth again here).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import PROFILE_ENV

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "tests" / "unit"
X86 = ("AVX512", "AVX2", "DEFAULT")  # torch.backends.cpu.get_cpu_capability()'s names, most vector units first
IN_THE_PASS = (
    "test_anatomy.py",
    "test_attention.py",
    "test_attnfile_grouped.py",
    "test_attnfile_lm.py",
    "test_grouped.py",
    "test_lesson_cost.py",
    "test_lm.py",
    "test_lm_generate.py",
    "test_lm_lens.py",
    "test_lm_load.py",
    "test_lm_sampling.py",
    "test_lmlab.py",
    "test_lmlab_forming.py",
    "test_mla.py",
    "test_modern_attention.py",
    "test_multihead.py",
    "test_positions.py",
    "test_tiled.py",
    "test_trained.py",
    "test_trained_generate.py",
    "test_trained_hooks.py",
    "test_trained_patching.py",
    "test_trained_window.py",
)
OUTSIDE = {
    "test_attnfile_capture.py": "builds transformers' BERT, GPT-2 and BART to capture them; our side of each "
    "comparison is attnfile_lm's and attention's, which are in the pass",
    "test_pretrained_encoder.py": "loads BertModel and sentence-transformers beside MiniLM (4 s before a test runs); "
    "MiniLM's heads are attention_steps and multi_head_steps, which are in the pass",
    "test_bench_modern.py": "compiles FlexAttention for every rule; its float64 reference is checked in float64's pair",
    "test_tolerance.py": "the bound's own arithmetic, on numbers the test writes: no kernel sums them",
}
PROBE = """
import sys, torch
want, args = sys.argv[1], sys.argv[2:]
got = torch.backends.cpu.get_cpu_capability()
if got != want:
    sys.exit(f"ATEN_CPU_CAPABILITY asked for {want}, torch runs {got}")
import pytest
sys.exit(pytest.main(args))
"""


def variants(native: str, mkl: bool) -> list[tuple[str, str, dict[str, str]]]:
    """(name, the capability torch must run, the environment it runs under) of every other order this CPU can take:
    DEFAULT alone, and MKL's generic kernels under the next capability down (or the native one), else that one alone."""
    lower = list(X86[X86.index(native) + 1 :]) if native in X86 else ([] if native == "DEFAULT" else ["DEFAULT"])
    between = [c for c in lower if c != "DEFAULT"][:1]  # AVX2 on an AVX-512 machine
    out = [("default", "DEFAULT", {"ATEN_CPU_CAPABILITY": "default"})] if "DEFAULT" in lower else []
    if not mkl:
        return out + [(c.lower(), c, {"ATEN_CPU_CAPABILITY": c.lower()}) for c in between]
    if not between:
        return [*out, ("mkl-compatible", native, {"MKL_CBWR": "COMPATIBLE"})]
    (c,) = between
    return [*out, (f"{c.lower()}-mkl-compatible", c, {"ATEN_CPU_CAPABILITY": c.lower(), "MKL_CBWR": "COMPATIBLE"})]


def test_a_cpu_tries_portable_code_alone_and_mkls_generic_kernels_one_capability_down():
    assert variants("AVX512", True) == [  # DEFAULT without MKL's generic kernels: with them it hid issue 57's failures
        ("default", "DEFAULT", {"ATEN_CPU_CAPABILITY": "default"}),
        ("avx2-mkl-compatible", "AVX2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE"}),
    ]
    assert [name for name, *_ in variants("AVX512", False)] == ["default", "avx2"]
    assert variants("AVX2", True)[1] == ("mkl-compatible", "AVX2", {"MKL_CBWR": "COMPATIBLE"})
    assert variants("AVX2", False) == [("default", "DEFAULT", {"ATEN_CPU_CAPABILITY": "default"})]
    assert variants("DEFAULT", False) == [] and [n for n, *_ in variants("DEFAULT", True)] == ["mkl-compatible"]
    assert [name for name, *_ in variants("SVE256", False)] == ["default"]  # arm64: no MKL


def test_every_module_that_compares_floats_is_in_the_pass_or_says_why_not():
    """A module that compares floats with tests.near (or holds patching shares) is in IN_THE_PASS or in OUTSIDE."""
    comparing = {p.name for p in UNIT.glob("test_*.py") if "\nfrom tests.near import assert_near\n" in p.read_text()}
    comparing.add("test_trained_patching.py")  # shares within TOL_SHARE, through pytest.approx
    assert comparing - set(IN_THE_PASS) - set(OUTSIDE) == set(), "add it to IN_THE_PASS, or to OUTSIDE with a reason"
    assert not set(IN_THE_PASS) & set(OUTSIDE) and all((UNIT / name).exists() for name in (*IN_THE_PASS, *OUTSIDE))


HERE = variants(torch.backends.cpu.get_cpu_capability(), torch.backends.mkl.is_available())


@pytest.mark.parametrize("name, capability, env", HERE or [("none", None, {})], ids=[v[0] for v in HERE] or ["none"])
def test_the_float_tests_hold_on_a_cpu_that_sums_in_another_order(name, capability, env):
    if capability is None:
        pytest.skip(f"{torch.backends.cpu.get_cpu_capability()} without MKL: no other order on this CPU")
    paths = [str(UNIT / module) for module in IN_THE_PASS]
    args = ["-p", "no:cacheprovider", "-n", "0", "-q", "--no-header", *paths]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, capability, *args],
        env={**os.environ, "OMP_NUM_THREADS": "1", PROFILE_ENV: "pass", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    said = " ".join(f"{k}={v}" for k, v in env.items())
    assert proc.returncode == 0, f"under {said}:\n" + "\n".join(
        failed or proc.stdout.splitlines()[-30:] + proc.stderr.splitlines()[-10:]
    )
