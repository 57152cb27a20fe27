"""Where a benchmark runs: the device it resolves to, its name, and the env block written with every result file."""

from __future__ import annotations

import contextlib
import platform
import sys
from dataclasses import asdict
from datetime import UTC, datetime

import numpy as np
import torch

from attnlab.bench.config import BenchConfig
from attnlab.bench.flex import compiler_missing
from attnlab.bench.peaks import PEAK_SOURCE, known_peak_tflops


def resolve_device(name: str) -> torch.device:
    """'auto' -> cuda if available else cpu; 'cuda' without CUDA is an error that says why."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        build = f"torch {torch.__version__}" + ("" if torch.version.cuda else " is a CPU-only build")
        raise RuntimeError(f"--device cuda was asked for but torch.cuda.is_available() is False ({build})")
    return torch.device(name)


def device_name(device: torch.device) -> str:
    """GPU name from the driver, or the CPU model from /proc/cpuinfo (platform.processor() otherwise)."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return "CPU: " + line.split(":", 1)[1].strip()
    return "CPU: " + (platform.processor() or platform.machine() or "unknown")


def environment(device: torch.device, config: BenchConfig) -> dict:
    """Where the numbers come from: versions, device, date and how each column is measured."""
    name = device_name(device)
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "device": device.type,
        "device_name": name,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu_threads": torch.get_num_threads(),
        "peak_tflops": {d: known_peak_tflops(name, d) for d in config.dtypes} if device.type == "cuda" else {},
        "peak_source": PEAK_SOURCE,
        "timing": (
            "CUDA events around each call, warm-up first, median and p20/p80 of the repetitions"
            if device.type == "cuda"
            else "time.perf_counter around each call, warm-up first, median and p20/p80"
        ),
        "flops": (
            "4*B*H*d per (query, key) pair the mask allows: T^2 for full, T^2/2 for causal, the exact count for "
            "window:W and documents:N; mha adds its projections, 8*B*T*E^2"
        ),
        "peak_mem": (
            "max_memory_allocated in a pass of its own, minus what was allocated before the call"
            if device.type == "cuda"
            else "the autograd profiler (profile_memory=True) in a pass of its own: the CPU allocator's "
            "peak of live bytes during the call (inputs excluded)"
        ),
        "reference": "float64 attention on the same (rounded) inputs and mask rule, computed in row chunks",
        "config": asdict(config),
    }
    if "flex" in config.impls:
        missing = compiler_missing(device) if config.flex_compile else "as asked (flex_compile=False, --flex-eager)"
        env["flex"] = {
            "compile": "torch.compile(flex_attention, dynamic=True), once per dtype, shape and rule"
            if missing is None
            else f"eager: {missing}",
            "block_mask": "create_block_mask of attnlab.masks.mask_mod, built outside the timed calls",
        }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env["capability"] = f"{props.major}.{props.minor}"
        env["gpu_memory_bytes"] = int(props.total_memory)
        env["allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
    return env
