"""The record preset's plan: which rows fit a device's memory and the time budget, and about how long each takes.

Nothing here is measured: a row's time comes from a model of the harness (`time_call`'s repetition rule) and
of the device (its matmul rate, bandwidth and launch cost from `DeviceSpec`). A call costs the larger of its
FLOPs at a share of the matmul peak and its memory traffic at the bandwidth, plus its kernel launches; the
tiled path adds some twenty launches per tile, since Python walks the tiles. A row is that call times the
calls the harness makes (probe, memory pass, warm-up, repetitions), plus a fixed cost; a point adds its
inputs (drawn on the CPU) and its float64 reference. The plan then leaves out, with their status:
rows whose memory estimate (`estimated_peak_bytes`) passes what the device holds (`oom`), every row of a
dtype the device cannot run (`unsupported: why`), and, while the sum passes the budget, the costliest rows
(`unsupported: left out by the record plan ...`). A point whose reference would take longer than
`REFERENCE_MAX_S` runs without the error check (max_abs_err None). `env.plan` in the results names all this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import torch

from attnlab.bench.config import SDPA_BACKENDS, BenchConfig, Point
from attnlab.bench.measure import attention_flops
from attnlab.bench.memory import as_dtype, format_bytes, row_peak_bytes
from attnlab.bench.peaks import known_peak_tflops

FUSED = ("sdpa", *SDPA_BACKENDS)  # one kernel (or the math path, see MATH_PASSES) chosen by PyTorch
FUSED_EFFICIENCY = 0.4  # share of the matmul peak a flash-style kernel reaches (FlashAttention-2: 35-70 %)
MATMUL_EFFICIENCY = 0.6  # share of the peak a large batched matmul reaches
EXPLICIT_PASSES = 16  # T x T reads and writes of attention_steps: eight stages kept, each written and read
MATH_PASSES = 6  # the math backend: scores, softmax in float32, weights read by the second matmul
TILE_LAUNCHES = 22  # kernels attnlab's tiled path launches per tile (slices, matmuls, online softmax)
TILE_PASSES = 6  # float32 tile reads and writes of the online softmax (scores, exp, sums, rescaling)
ROW_OVERHEAD_S = 0.05  # per row: allocator release, profiler or CUDA bookkeeping, Python
FIRST_CALL_S = 0.5  # on a GPU, sdpa and sdpa-cudnn may build a cuDNN graph for each new shape on the first call
RANDN_PER_S = 1e8  # CPU normal draws per second for the inputs (seeded on the CPU for every device)
REFERENCE_MAX_S = 3.0  # a point whose float64 reference would take longer runs unchecked
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


def linear(impl: str, spec: DeviceSpec) -> bool:
    """Whether an implementation holds O(T) memory here: the tiled path, and on a GPU every fused kernel."""
    return impl == "tiled" or (spec.kind == "cuda" and impl in FUSED and impl != "sdpa-math")


def _item(dtype: str) -> int:
    """Bytes per element."""
    return torch.empty((), dtype=as_dtype(dtype)).element_size()


def call_seconds(impl: str, spec: DeviceSpec, config: BenchConfig, dtype: str, t: int) -> float:
    """One call's estimated time: FLOPs at a share of the peak or traffic at the bandwidth, plus launches."""
    b, h, d = config.batch, config.heads, config.head_dim
    peak, bandwidth = spec.tflops[dtype] * 1e12, spec.bandwidth_gbs * 1e9
    cells = b * h * t * t  # one T x T matrix
    if impl in FUSED and impl != "sdpa-math":
        flops = attention_flops(b, h, t, t, d, config.causal)
        return max(flops / (FUSED_EFFICIENCY * peak), 4 * b * h * t * d * _item(dtype) / bandwidth) + 5 * spec.launch_s
    full = attention_flops(b, h, t, t, d, False) / (MATMUL_EFFICIENCY * peak)  # the mask is applied, not skipped
    if impl == "sdpa-math":
        return full + cells * 4 * MATH_PASSES / bandwidth + 10 * spec.launch_s
    if impl == "explicit":
        return full + cells * _item(dtype) * EXPLICIT_PASSES / bandwidth + 12 * spec.launch_s
    n = math.ceil(t / config.tiled_block)  # query blocks, and key blocks
    tiles = n * (n + 1) // 2 if config.causal else n * n  # causal: the tiles past the diagonal are skipped
    share = 0.5 if config.causal else 1.0
    return share * (full + cells * 4 * TILE_PASSES / bandwidth) + tiles * TILE_LAUNCHES * spec.launch_s


def harness_calls(call_s: float, config: BenchConfig) -> int:
    """Calls `measure` makes for one row at this call time: probe, memory pass, then `time_call`'s own rule."""
    warm, spent = 0, 0.0
    for i in range(config.warmup):
        if i > 0 and spent >= config.min_time_s:
            break
        warm, spent = warm + 1, spent + call_s
    reps = 0
    while reps < config.max_reps:
        measured = reps * call_s
        if (reps >= config.min_reps and measured >= config.min_time_s) or (reps >= 3 and measured >= config.max_time_s):
            break
        reps += 1
    return 2 + warm + reps


def row_seconds(impl: str, spec: DeviceSpec, config: BenchConfig, dtype: str, t: int) -> float:
    """One row's estimated wall time."""
    call = call_seconds(impl, spec, config, dtype, t)
    first = FIRST_CALL_S if spec.kind == "cuda" and impl in ("sdpa", "sdpa-cudnn") else 0.0
    return harness_calls(call, config) * call + first + ROW_OVERHEAD_S


def reference_seconds(spec: DeviceSpec, config: BenchConfig, t: int) -> float:
    """The float64 answer of one point: full matmuls at the float64 rate and its score rows' traffic."""
    flops = attention_flops(config.batch, config.heads, t, t, config.head_dim, False)
    cells = config.batch * config.heads * t * t
    return flops / (MATMUL_EFFICIENCY * spec.tflops["float64"] * 1e12) + cells * 8 * 4 / (spec.bandwidth_gbs * 1e9)


def inputs_seconds(config: BenchConfig, t: int) -> float:
    """Drawing q, k and v on the CPU (seeded there on every device) and moving them."""
    return 3 * config.batch * config.heads * t * config.head_dim / RANDN_PER_S


@dataclass
class Plan:
    """The points to run, what they leave out and why, and the estimate the budget was held to."""

    points: list[Point]
    spec: DeviceSpec
    estimate_s: float
    budget_s: float
    unchecked: list[str] = field(default_factory=list)  # points run without the float64 reference

    @property
    def rows(self) -> int:
        """Rows the results file will hold, measured or not."""
        return sum(len(p.impls) for p in self.points)

    def left_out(self) -> list[dict]:
        """Every row the plan left out: where, the status it is written with, and for `oom` the estimate."""
        out = []
        for p in self.points:
            c = p.config
            for impl, status in p.skip.items():
                row = {"impl": impl, "dtype": p.dtype, "seq_len": p.seq_len, "head_dim": c.head_dim, "causal": c.causal}
                if status == "oom":
                    need = row_peak_bytes(
                        impl, c.batch, c.heads, p.seq_len, p.dtype, c.head_dim, c.check, linear(impl, self.spec)
                    )
                    status += f": foreseen, needs about {format_bytes(need)}, {memory_note(self.spec)}"
                out.append({**row, "why": status})
        return out

    def summary(self) -> str:
        """One line for the terminal."""
        measured = sum(len(p.measured) for p in self.points)
        return (
            f"{self.rows} rows: {measured} to measure, {self.rows - measured} left out; "
            f"estimated {self.estimate_s / 60:.1f} min of a {self.budget_s / 60:.1f} min budget"
        )


def _point_cost(point: Point, spec: DeviceSpec, timed: Mapping[str, float]) -> float:
    """What a point costs with the rows still measured: inputs, reference (if checked) and those rows."""
    if not point.measured:
        return 0.0
    ref = reference_seconds(spec, point.config, point.seq_len) if point.config.check else 0.0
    return inputs_seconds(point.config, point.seq_len) + ref + sum(timed[i] for i in point.measured)


def make_plan(
    configs: list[BenchConfig], spec: DeviceSpec, budget_s: float, unrunnable: Mapping[str, str] | None = None
) -> Plan:
    """Points for every config x dtype x T, left-outs marked: memory, dtypes the device cannot run, then time."""
    unrunnable = unrunnable or {}
    points, costs, unchecked = [], [], []
    for config in configs:
        for dtype in config.dtypes:
            for t in config.seq_lens:
                cfg = config
                if config.check and reference_seconds(spec, config, t) > REFERENCE_MAX_S:
                    cfg = replace(config, check=False)
                    unchecked.append(f"{dtype} d={config.head_dim} causal={config.causal} T={t}")
                skip = {}
                for impl in config.impls:
                    need = row_peak_bytes(
                        impl, config.batch, config.heads, t, dtype, config.head_dim, cfg.check, linear(impl, spec)
                    )
                    if dtype in unrunnable:
                        skip[impl] = f"unsupported: {unrunnable[dtype]}"
                    elif need > spec.memory_bytes:
                        skip[impl] = "oom"
                points.append(Point(cfg, dtype, t, config.impls, skip))
                costs.append({i: row_seconds(i, spec, cfg, dtype, t) for i in config.impls})
    return _fit_budget(Plan(points, spec, 0.0, budget_s, unchecked), spec, costs)


def _fit_budget(plan: Plan, spec: DeviceSpec, costs: list[dict[str, float]]) -> Plan:
    """Leave out the costliest measured rows until the whole estimate fits the budget."""
    total = sum(_point_cost(p, spec, c) for p, c in zip(plan.points, costs, strict=True))
    while total > plan.budget_s:
        candidates = [(c[i], n, i) for n, (p, c) in enumerate(zip(plan.points, costs, strict=True)) for i in p.measured]
        if not candidates:
            break
        cost, n, impl = max(candidates)
        point = plan.points[n]
        before = _point_cost(point, spec, costs[n])
        why = (
            f"unsupported: left out by the record plan: about {cost:.0f} s on {spec.name} "
            f"would pass the {plan.budget_s:.0f} s budget (--budget-s raises it)"
        )
        plan.points[n] = replace(point, skip={**point.skip, impl: why})
        total -= before - _point_cost(plan.points[n], spec, costs[n])
    plan.estimate_s = total
    return plan


def memory_note(spec: DeviceSpec) -> str:
    """How much memory the plan allowed, for the results' env."""
    return f"{format_bytes(spec.memory_bytes)} usable of {spec.name}"
