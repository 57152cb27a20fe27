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

Masks and grouped heads (contract 15): SDPA given a dense mask (a window, packed documents) cannot skip what the
mask blocks, so it pays the full T^2 and reads the mask; compiled FlexAttention computes only the blocks the rule
touches (its allowed pairs plus a block's width along each edge) at a share of a fused kernel's rate, and pays
`FLEX_COMPILE_S` once per config (its first T: the compile is dynamic in T, `attnlab.bench.flex`).
Eager FlexAttention is costed like the math path. Grouped key/value heads change no FLOPs.

nn.MultiheadAttention (`mha`) adds its four (E, E) projections at the matmul rate to the attention inside it, which
on a GPU is SDPA's fused kernel (its fast path calls it) and on a CPU the math path; causal, it is handed the dense
T x T mask (`impls._mha`), so nothing is skipped and the mask is read. Its error check is a float64 run of the whole
module (`reference.reference_mha`), costed on top of the point's own reference. On a GPU its memory is counted as a
fused kernel's, O(T) (a choice: should PyTorch pick the math path instead, the row is written `oom`, not planned).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import torch

from attnlab.bench.config import SDPA_BACKENDS, BenchConfig, Point
from attnlab.bench.devices import (
    CPU_BANDWIDTH_GBS,
    CPU_TFLOPS,
    PLAN_GPUS,
    UNKNOWN_GPU,
    DeviceSpec,
    describe,
    gpu_spec,
)
from attnlab.bench.measure import attention_flops, mha_projection_flops
from attnlab.bench.memory import as_dtype, format_bytes, row_peak_bytes

__all__ = ["CPU_BANDWIDTH_GBS", "CPU_TFLOPS", "PLAN_GPUS", "UNKNOWN_GPU", "DeviceSpec", "describe", "gpu_spec"]

FUSED = ("sdpa", *SDPA_BACKENDS)  # one kernel (or the math path, see MATH_PASSES) chosen by PyTorch
FUSED_EFFICIENCY = 0.4  # share of the matmul peak a flash-style kernel reaches (FlashAttention-2: 35-70 %)
MATMUL_EFFICIENCY = 0.6  # share of the peak a large batched matmul reaches
EXPLICIT_PASSES = 16  # T x T reads and writes of attention_steps: eight stages kept, each written and read
MATH_PASSES = 6  # the math backend: scores, softmax in float32, weights read by the second matmul
TILE_LAUNCHES = 22  # kernels attnlab's tiled path launches per tile (slices, matmuls, online softmax)
TILE_PASSES = 6  # float32 tile reads and writes of the online softmax (scores, exp, sums, rescaling)
ROW_OVERHEAD_S = 0.05  # per row: allocator release, profiler or CUDA bookkeeping, Python
FLEX_EFFICIENCY = 0.8  # compiled FlexAttention's rate as a share of a fused kernel's (PyTorch's blog: ~85-90 % of FA2)
FLEX_BLOCK = 128  # FlexAttention's block: a rule's edges cost up to a block's width of extra pairs per query
FLEX_PASSES = 8  # eager FlexAttention: scores, the mask, softmax in float32, weights, all as T x T passes
FLEX_COMPILE_S = {"cuda": 30.0, "cpu": 20.0}  # one torch.compile of FlexAttention: dynamo, inductor, the kernel
FIRST_CALL_S = 0.5  # on a GPU, sdpa and sdpa-cudnn may build a cuDNN graph for each new shape on the first call
RANDN_PER_S = 1e8  # CPU normal draws per second for the inputs (seeded on the CPU for every device)
REFERENCE_MAX_S = 3.0  # a point whose float64 reference would take longer runs unchecked


def linear(impl: str, spec: DeviceSpec) -> bool:
    """Whether an implementation holds O(T) memory here: the tiled path, and on a GPU every fused kernel, flex and
    nn.MultiheadAttention (its fast path calls a fused kernel)."""
    fused = impl in FUSED or impl in ("flex", "mha")
    return impl == "tiled" or (spec.kind == "cuda" and fused and impl != "sdpa-math")


def flex_compiled(spec: DeviceSpec, config: BenchConfig) -> bool:
    """Whether the plan counts FlexAttention as compiled: asked for, and on CUDA (on a CPU it may lack a compiler)."""
    return config.flex_compile and spec.kind == "cuda"


def touched_pairs(config: BenchConfig, t: int) -> int:
    """The (query, key) pairs compiled FlexAttention computes: the allowed ones plus the partial blocks on the edges."""
    rule = config.rule
    if rule.kind == "full":
        return t * t
    edges = 2 if rule.kind == "window" else 1  # a window has a lower edge too; documents' edges lie on the diagonal
    return min(t * t, rule.pairs(t) + edges * t * min(FLEX_BLOCK, t))


def _item(dtype: str) -> int:
    """Bytes per element."""
    return torch.empty((), dtype=as_dtype(dtype)).element_size()


def call_seconds(impl: str, spec: DeviceSpec, config: BenchConfig, dtype: str, t: int) -> float:
    """One call's estimated time: FLOPs at a share of the peak or traffic at the bandwidth, plus launches."""
    b, h, d = config.batch, config.heads, config.head_dim
    peak, bandwidth = spec.tflops[dtype] * 1e12, spec.bandwidth_gbs * 1e9
    if impl == "mha":
        return _mha_seconds(spec, config, dtype, t)
    cells = b * h * t * t  # one T x T matrix
    dense = config.rule.dense_needed  # a dense bool mask: read by every head, and nothing it blocks is skipped
    mask_s = cells / bandwidth if dense else 0.0
    if impl == "flex" and flex_compiled(spec, config):
        flops = 4.0 * b * h * d * touched_pairs(config, t) / (FLEX_EFFICIENCY * FUSED_EFFICIENCY * peak)
        return max(flops, 4 * b * h * t * d * _item(dtype) / bandwidth) + 5 * spec.launch_s
    if impl in FUSED and impl != "sdpa-math":
        flops = attention_flops(b, h, t, t, d, config.causal)
        streams = 4 * b * h * t * d * _item(dtype) / bandwidth
        return max(flops / (FUSED_EFFICIENCY * peak), streams) + mask_s + 5 * spec.launch_s
    full = attention_flops(b, h, t, t, d, False) / (MATMUL_EFFICIENCY * peak)  # the mask is applied, not skipped
    if impl == "flex":  # eager: every score computed, then masked
        return full + cells * 4 * FLEX_PASSES / bandwidth + 20 * spec.launch_s
    if impl == "sdpa-math":
        return full + cells * 4 * MATH_PASSES / bandwidth + mask_s + 10 * spec.launch_s
    if impl == "explicit":
        return full + cells * _item(dtype) * EXPLICIT_PASSES / bandwidth + mask_s + 12 * spec.launch_s
    n = math.ceil(t / config.tiled_block)  # query blocks, and key blocks
    tiles = n * (n + 1) // 2 if config.causal else n * n  # causal: the tiles past the diagonal are skipped
    share = 0.5 if config.causal else 1.0
    return share * (full + cells * 4 * TILE_PASSES / bandwidth) + tiles * TILE_LAUNCHES * spec.launch_s


def _mha_seconds(spec: DeviceSpec, config: BenchConfig, dtype: str, t: int) -> float:
    """nn.MultiheadAttention: its projections, then the attention its fast path runs, a causal mask read densely."""
    b, h, d = config.batch, config.heads, config.head_dim
    projections = mha_projection_flops(b, t, h * d) / (MATMUL_EFFICIENCY * spec.tflops[dtype] * 1e12)
    whole = replace(config, causal=False, mask="full") if config.causal else config  # nothing skipped
    mask_s = b * h * t * t / (spec.bandwidth_gbs * 1e9) if config.causal else 0.0
    inner = "sdpa" if spec.kind == "cuda" else "sdpa-math"
    return projections + call_seconds(inner, spec, whole, dtype, t) + mask_s + 6 * spec.launch_s


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
    if impl == "sdpa-flash" and config.rule.dense_needed:  # the flash backend refuses a mask at its first call
        return ROW_OVERHEAD_S
    call = call_seconds(impl, spec, config, dtype, t)
    first = FIRST_CALL_S if spec.kind == "cuda" and impl in ("sdpa", "sdpa-cudnn", "mha") else 0.0
    own_reference = mha_reference_seconds(spec, config, t) if impl == "mha" and config.check else 0.0
    return harness_calls(call, config) * call + first + own_reference + ROW_OVERHEAD_S


def mha_reference_seconds(spec: DeviceSpec, config: BenchConfig, t: int) -> float:
    """nn.MultiheadAttention's own float64 answer: its projections and the attention between them."""
    projections = mha_projection_flops(config.batch, t, config.heads * config.head_dim)
    return projections / (MATMUL_EFFICIENCY * spec.tflops["float64"] * 1e12) + reference_seconds(spec, config, t)


def compile_seconds(spec: DeviceSpec) -> float:
    """One torch.compile of FlexAttention on this kind of device."""
    return FLEX_COMPILE_S.get(spec.kind, FLEX_COMPILE_S["cpu"])


def _family(point: Point) -> tuple | None:
    """What one FlexAttention compile serves (every T of a dtype, shape and rule), or None when nothing compiles."""
    c = point.config
    if "flex" not in point.measured or not c.flex_compile:
        return None
    return (point.dtype, c.batch, c.heads, c.kv_heads, c.head_dim, c.mask)


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
                row |= {"kv_heads": c.kv_heads, "mask": c.mask}
                if status == "oom":
                    need = row_peak_bytes(
                        impl,
                        c.batch,
                        c.heads,
                        p.seq_len,
                        p.dtype,
                        c.head_dim,
                        c.check,
                        linear(impl, self.spec),
                        kv_heads=c.kv_heads,
                        mask=c.mask,
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
                    unchecked.append(f"{dtype} d={config.head_dim} mask={config.mask} kv={config.kv_heads} T={t}")
                skip = {}
                for impl in config.impls:
                    need = row_peak_bytes(
                        impl,
                        config.batch,
                        config.heads,
                        t,
                        dtype,
                        config.head_dim,
                        cfg.check,
                        linear(impl, spec),
                        kv_heads=config.kv_heads,
                        mask=config.mask,
                    )
                    if dtype in unrunnable:
                        skip[impl] = f"unsupported: {unrunnable[dtype]}"
                    elif need > spec.memory_bytes:
                        skip[impl] = "oom"
                points.append(Point(cfg, dtype, t, config.impls, skip))
                costs.append({i: row_seconds(i, spec, cfg, dtype, t) for i in config.impls})
    return _fit_budget(Plan(points, spec, 0.0, budget_s, unchecked), spec, costs)


def _total(plan: Plan, spec: DeviceSpec, costs: list[dict[str, float]]) -> float:
    """The whole estimate: every point with the rows it still measures, and one compile per FlexAttention family."""
    rows = sum(_point_cost(p, spec, c) for p, c in zip(plan.points, costs, strict=True))
    families = {f for f in map(_family, plan.points) if f is not None}
    return rows + len(families) * compile_seconds(spec)


def _marginal(plan: Plan, n: int, impl: str, spec: DeviceSpec, cost: float) -> float:
    """What leaving one row out saves: the row, and its family's compile when it is the last flex row measured."""
    family = _family(plan.points[n]) if impl == "flex" else None
    if family is None:
        return cost
    alone = sum(_family(p) == family for p in plan.points) == 1
    return cost + compile_seconds(spec) if alone else cost


def _fit_budget(plan: Plan, spec: DeviceSpec, costs: list[dict[str, float]]) -> Plan:
    """Leave out the costliest measured rows (a compile counted with the last row it serves) until the estimate fits."""
    total = _total(plan, spec, costs)
    while total > plan.budget_s:
        candidates = [
            (_marginal(plan, n, i, spec, c[i]), n, i)
            for n, (p, c) in enumerate(zip(plan.points, costs, strict=True))
            for i in p.measured
        ]
        if not candidates:
            break
        cost, n, impl = max(candidates)
        point = plan.points[n]
        why = (
            f"unsupported: left out by the record plan: about {cost:.0f} s on {spec.name} "
            f"would pass the {plan.budget_s:.0f} s budget (--budget-s raises it)"
        )
        plan.points[n] = replace(point, skip={**point.skip, impl: why})
        total = _total(plan, spec, costs)
    plan.estimate_s = total
    return plan


def memory_note(spec: DeviceSpec) -> str:
    """How much memory the plan allowed, for the results' env."""
    return f"{format_bytes(spec.memory_bytes)} usable of {spec.name}"
