"""What the record plan assumes about a device: its memory, its matmul rates per dtype, its bandwidth, its launch cost.

Planning figures only (datasheet peaks where `peaks.KNOWN_PEAKS` has them, a slow guess for an unknown GPU, a few
CPU cores without guessing high): the share of peak in results comes from `peaks` alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from attnlab.bench.peaks import known_peak_tflops

MEMORY_SHARE = 0.9  # of the device's memory the plan lets one row use (the CUDA context and the cache keep the rest)
CUDA_CONTEXT_BYTES = 2**29

# Planning figures for GPUs (dense fp16/bf16 tensor, plain fp32, fp64 TFLOP/s, GB/s): assumptions for the
# estimate only; the share of peak in results comes from `peaks.KNOWN_PEAKS` alone. First match wins.
PLAN_GPUS: tuple[tuple[str, dict[str, float], float], ...] = (
    ("H200", {"float16": 989.4, "bfloat16": 989.4, "float32": 66.9, "float64": 66.9}, 4800.0),
    ("H100 PCIe", {"float16": 756.0, "bfloat16": 756.0, "float32": 51.2, "float64": 51.2}, 2000.0),
    ("H100", {"float16": 989.4, "bfloat16": 989.4, "float32": 66.9, "float64": 66.9}, 3350.0),
    ("A100", {"float16": 312.0, "bfloat16": 312.0, "float32": 19.5, "float64": 19.5}, 1555.0),
    ("L4", {"float16": 121.0, "bfloat16": 121.0, "float32": 30.3, "float64": 0.5}, 300.0),
    ("T4", {"float16": 65.0, "bfloat16": 8.1, "float32": 8.1, "float64": 0.25}, 320.0),
)
UNKNOWN_GPU = ({"float16": 50.0, "bfloat16": 25.0, "float32": 8.0, "float64": 0.25}, 300.0)  # a slow one: plan low
CPU_TFLOPS = {"float16": 0.01, "bfloat16": 0.01, "float32": 0.05, "float64": 0.025}  # a few cores, no guessing high
CPU_BANDWIDTH_GBS = 10.0


@dataclass(frozen=True)
class DeviceSpec:
    """What the plan assumes about a device: its memory, matmul rates per dtype, bandwidth and launch cost."""

    kind: str  # "cuda" or "cpu"
    name: str
    memory_bytes: int  # what the sweep may hold at once
    tflops: Mapping[str, float]  # dense matmul TFLOP/s per dtype
    bandwidth_gbs: float
    launch_s: float  # one small op from Python: launch (GPU) or dispatch (CPU)


def _available_ram() -> int:
    """MemAvailable from /proc/meminfo, or 4 GiB where there is none."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 4 * 2**30


def gpu_spec(name: str, memory_bytes: int) -> DeviceSpec:
    """A GPU by name and memory: planning rates from PLAN_GPUS (datasheet peaks first), a slow guess otherwise."""
    rates, bandwidth = next(((r, b) for needle, r, b in PLAN_GPUS if needle.lower() in name.lower()), UNKNOWN_GPU)
    rates = {d: known_peak_tflops(name, d) or r for d, r in rates.items()}
    usable = int(memory_bytes * MEMORY_SHARE) - CUDA_CONTEXT_BYTES
    return DeviceSpec("cuda", name, max(usable, 0), rates, bandwidth, 12e-6)


def describe(device: torch.device) -> DeviceSpec:
    """The plan's view of a real device: a GPU by its name and memory, the CPU by its free RAM."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return gpu_spec(torch.cuda.get_device_name(device), int(props.total_memory))
    ram = int(_available_ram() * MEMORY_SHARE)
    return DeviceSpec("cpu", "CPU", ram, dict(CPU_TFLOPS), CPU_BANDWIDTH_GBS, 5e-6)
