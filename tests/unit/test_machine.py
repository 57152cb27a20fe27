"""CI says where it ran: scripts/machine.py names the CPU, PyTorch's CPU capability and BLAS, and .ci/run prints
them between the README's install and its tests."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import torch

from attnlab.bench.env import device_name

ROOT = Path(__file__).resolve().parents[2]


def machine():
    """scripts/machine.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("machine", ROOT / "scripts" / "machine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lines_say_what_torch_itself_reports(monkeypatch):
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    cpu, kernels, blas = machine().describe()
    assert cpu.startswith(f"cpu: {device_name(torch.device('cpu')).removeprefix('CPU: ')}, ")
    assert kernels == f"torch {torch.__version__}: CPU capability {torch.backends.cpu.get_cpu_capability()}"
    assert blas.startswith("blas: " + re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show()).group(1))
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")  # read by torch when it loads; said as it is set
    assert machine().describe()[1].endswith("(ATEN_CPU_CAPABILITY=default)")


def test_the_blas_is_read_from_the_build_settings_and_the_library_line():
    blas = machine().blas
    mkl = "  - Intel(R) oneAPI Math Kernel Library Version 2024.2\n  - LAPACK is enabled (usually provided by MKL)\n"
    assert blas(mkl + "  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release") == (
        "mkl (Intel(R) oneAPI Math Kernel Library Version 2024.2)"
    )
    assert blas("  - Build settings: BUILD_TYPE=Release, BLAS_INFO=open, LAPACK_INFO=open") == "open"
    assert blas("PyTorch built with:\n  - GCC 13.3\n") == "not said"


def test_ci_prints_where_it_runs_between_the_readmes_install_and_its_tests():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "pip install -r requirements-dev.txt && python -m pytest"
    assert f"```bash\n{command}\n```" in readme  # the README's second command
    steps = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    install, test = command.split(" && ")
    assert steps[-3:] == [install, "python scripts/machine.py", test]
    assert "set -euo pipefail" in steps  # a failed install stops the run, as && would
