"""Where the tests run, for a CI log: the CPU model, PyTorch's CPU capability and the BLAS it uses.

usage: python scripts/machine.py   (`.ci/run` prints it between the install and the tests)

The same float32 code rounds differently on other kernels (AVX512, AVX2 or the default ones; MKL or OpenBLAS), so
a failure on another machine is read beside these lines. ATEN_CPU_CAPABILITY, where set, caps the capability
PyTorch picks: it is said too.
"""

from __future__ import annotations

import os
import platform
import re

import torch

from attnlab.bench.env import device_name

# a line of torch.__config__.show() that names the BLAS library itself (MKL says "Math Kernel Library")
BLAS_LIBRARY = re.compile(r"math kernel library|openblas|blis|accelerate|arm performance libraries|nvpl", re.I)


def blas(config: str) -> str:
    """The BLAS in a `torch.__config__.show()` text: BLAS_INFO, and the line that names its library and version."""
    info = re.search(r"BLAS_INFO=([^,\s]+)", config)
    library = next((line.strip(" -\t") for line in config.splitlines() if BLAS_LIBRARY.search(line)), "")
    return (info.group(1) if info else "not said") + (f" ({library})" if library else "")


def describe() -> list[str]:
    """Three lines: the CPU and its cores, PyTorch and the CPU capability its kernels use, the BLAS."""
    forced = os.environ.get("ATEN_CPU_CAPABILITY")
    capability = torch.backends.cpu.get_cpu_capability() + (f" (ATEN_CPU_CAPABILITY={forced})" if forced else "")
    return [
        f"cpu: {device_name(torch.device('cpu')).removeprefix('CPU: ')}, {os.cpu_count()} cores, {platform.machine()}",
        f"torch {torch.__version__}: CPU capability {capability}",
        f"blas: {blas(torch.__config__.show())}",
    ]


if __name__ == "__main__":
    print("\n".join(describe()), flush=True)
