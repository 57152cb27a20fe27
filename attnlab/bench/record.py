"""The record preset: the headline sweep, planned to fit the device, with attnlab's timer checked first.

`python -m attnlab.bench --preset record --out FILE` runs float16, bfloat16 and float32 x head dim 64 and 128 x
causal and not x T from 512 to 16384 x every SDPA backend forced in turn, `sdpa` free, attnlab's explicit
and tiled paths, and nn.MultiheadAttention (`mha`, PyTorch's module: its four projections around the attention, in
every dtype; the Playground checks against it), at a width H x d of 2048 (FlashAttention's benchmark setting: 32
heads of 64, 16 of 128).
Contract 15's rows follow (`Extra`), in bfloat16 at head dim 128 (16 heads, Llama's head size): a sliding
window of 4096 for FlexAttention and SDPA (given the dense mask), grouped-query attention with 8 query heads per
key/value head (2 of them) for FlexAttention and SDPA (`enable_gqa`), and FlexAttention causal with every head
its own keys, so time and key/value memory can be read against the number of key/value heads.
`attnlab.bench.plan` leaves out what would not fit the device's memory or the time budget (480 s of
estimated work, so the whole run stays within 10 minutes on one H100), and every left-out row is still
written, with its status. `--dry-run` runs the same code at tiny sizes (on the CPU unless a device is named),
with FlexAttention eager: a compile would take longer than the whole dry run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F

from attnlab.bench.busy import BusyMeter
from attnlab.bench.config import BenchConfig, Progress
from attnlab.bench.env import environment
from attnlab.bench.impls import make_call
from attnlab.bench.measure import free, one_line, time_call
from attnlab.bench.memory import as_dtype
from attnlab.bench.plan import Plan, describe, make_plan, memory_note
from attnlab.bench.sweep import build_case, iter_points, torch_threads

RECORD_IMPLS = ("explicit", "tiled", "sdpa", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "mha")
MODERN_IMPLS = ("flex", "sdpa", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn")


@dataclass(frozen=True)
class Extra:
    """Rows beyond the headline grid (contract 15): one mask rule and key/value grouping, over the grid's T."""

    mask: str  # a rule: causal, window:W, documents:N
    group: int  # query heads per key/value head
    impls: tuple[str, ...]
    dtypes: tuple[str, ...]
    head_dims: tuple[int, ...]


@dataclass(frozen=True)
class Grid:
    """A preset's sweep: dtypes x head dims x masks x T x implementations at one width H x d."""

    dtypes: tuple[str, ...]
    head_dims: tuple[int, ...]
    seq_lens: tuple[int, ...]
    width: int  # H x d: heads = width // head_dim
    batch: int
    tiled_block: int
    budget_s: float  # estimated seconds of sweep the plan allows
    check_point: tuple[str, int, int]  # (dtype, head_dim, T) of the timer check
    timing: dict = field(default_factory=dict)  # warmup, min_reps, max_reps, min_time_s, max_time_s
    impls: tuple[str, ...] = RECORD_IMPLS
    masks: tuple[bool, ...] = (False, True)
    extras: tuple[Extra, ...] = ()
    flex_compile: bool = True  # compile FlexAttention where the device can

    def configs(self, device: str, seed: int = 0) -> list[BenchConfig]:
        """One BenchConfig per (head dim, mask), then one per extra's head dim: each holds every dtype, T and impl."""
        common = dict(device=device, seq_lens=self.seq_lens, batch=self.batch, seed=seed, tiled_block=self.tiled_block)
        common |= dict(flex_compile=self.flex_compile, **self.timing)
        main = [
            BenchConfig(
                dtypes=self.dtypes,
                heads=self.width // d,
                head_dim=d,
                causal=causal,
                impls=self.impls,
                **common,
            )
            for d in self.head_dims
            for causal in self.masks
        ]
        extra = [
            BenchConfig(
                dtypes=x.dtypes,
                heads=self.width // d,
                head_dim=d,
                kv_heads=self.width // d // x.group,
                mask=x.mask,
                impls=x.impls,
                **common,
            )
            for x in self.extras
            for d in x.head_dims
        ]
        return main + extra


RECORD = Grid(
    dtypes=("float16", "bfloat16", "float32"),
    head_dims=(64, 128),
    seq_lens=(512, 1024, 2048, 4096, 8192, 16384),
    width=2048,
    batch=2,
    tiled_block=256,  # 128 would cost Python four times the tiles
    budget_s=480.0,
    check_point=("bfloat16", 128, 4096),
    timing=dict(warmup=3, min_reps=5, max_reps=100, min_time_s=0.1, max_time_s=1.0),
    extras=(
        Extra("window:4096", 1, MODERN_IMPLS, ("bfloat16",), (128,)),
        Extra("causal", 8, MODERN_IMPLS, ("bfloat16",), (128,)),
        Extra("causal", 1, ("flex",), ("bfloat16",), (128,)),  # beside the grid's SDPA rows at 16 key/value heads
    ),
)
DRY_RUN = Grid(
    dtypes=RECORD.dtypes,
    head_dims=(8, 16),
    seq_lens=(16, 32),
    width=32,
    batch=1,
    tiled_block=16,  # T=32 still walks four tiles
    budget_s=50.0,
    check_point=("float32", 16, 32),
    timing=dict(warmup=1, min_reps=2, max_reps=3, min_time_s=0.0, max_time_s=0.05),
    extras=(
        Extra("window:8", 1, MODERN_IMPLS, ("bfloat16",), (16,)),
        Extra("causal", 2, MODERN_IMPLS, ("bfloat16",), (16,)),
        Extra("causal", 1, ("flex",), ("bfloat16",), (16,)),
    ),
    flex_compile=False,
)


def dtype_problems(device: torch.device, dtypes: tuple[str, ...]) -> dict[str, str]:
    """{dtype: why} for the dtypes this device cannot run attention in (a tiny SDPA and matmul tried)."""
    out = {}
    for name in dtypes:
        try:
            q = torch.ones(1, 1, 4, 8).to(device, as_dtype(name))
            (F.scaled_dot_product_attention(q, q, q) @ q.transpose(-2, -1)).sum().item()
        except Exception as exc:  # whatever the device says is the reason
            out[name] = one_line(f"{name} cannot run on this device: {exc or type(exc).__name__}", 300)
    return out


def timer_check(device: torch.device, config: BenchConfig, dtype: str, t: int) -> dict:
    """attnlab's timer against torch.utils.benchmark.Timer on one size (free sdpa): both medians and their ratio."""
    from torch.utils import benchmark

    where = {"impl": "sdpa", "dtype": dtype, "batch": config.batch, "heads": config.heads}
    where |= {"head_dim": config.head_dim, "seq_len": t, "causal": config.causal}
    try:
        with torch.inference_mode():
            case = build_case(device, dtype, t, replace(config, check=False))
            call, _ = make_call("sdpa", case, config)
            ours = float(np.median(time_call(call, device, config)))
            timer = benchmark.Timer(stmt="call()", globals={"call": call}, num_threads=torch.get_num_threads())
            theirs = timer.blocked_autorange(min_run_time=max(config.min_time_s, 0.05)).median * 1e3
        return {**where, "attnlab_ms": ours, "torch_benchmark_ms": theirs, "ratio": ours / theirs}
    except Exception as exc:  # a check that cannot run is written down, and the sweep goes on
        return {**where, "error": one_line(str(exc) or type(exc).__name__, 300)}
    finally:
        free(device, collect=True)


def check_config(grid: Grid, configs: list[BenchConfig], skip: dict[str, str]) -> tuple[BenchConfig, str, int]:
    """The config, dtype and T of the timer check: the grid's, or its first dtype the device runs."""
    dtype, head_dim, t = grid.check_point
    if dtype in skip:
        dtype = next((d for d in grid.dtypes if d not in skip), dtype)
    plain = [c for c in configs if c.mask == "full" and c.kv_heads == c.heads]
    config = next((c for c in plain if c.head_dim == head_dim), configs[0])
    return config, dtype, t


def run_record(
    grid: Grid,
    device: torch.device,
    *,
    dry_run: bool = False,
    budget_s: float | None = None,
    threads: int | None = None,
    seed: int = 0,
    on_plan: Callable[[Plan], None] | None = None,
    on_progress: Progress | None = None,
) -> dict:
    """Plan, check the timer, run every point; the contract's document with the plan and the check in env."""
    started = time.perf_counter()
    with torch_threads(threads):
        configs = grid.configs(device.type, seed)
        skip = dtype_problems(device, grid.dtypes)
        plan = make_plan(configs, describe(device), grid.budget_s if budget_s is None else budget_s, skip)
        if on_plan is not None:
            on_plan(plan)
        env = environment(device, configs[0])
        del env["config"]  # one config would misdescribe the grid: `preset` says what ran
        env["preset"] = {"name": "record", "dry_run": dry_run, **asdict(grid)}
        env["timer_check"] = timer_check(device, *check_config(grid, configs, skip))
        meter, results = BusyMeter.start(), []
        for row in iter_points(plan.points, device):
            results.append(row.to_dict())
            if on_progress is not None:
                on_progress(len(results), plan.rows, row)
        env["machine_load"] = meter.read()
    env["plan"] = {
        "estimated_s": round(plan.estimate_s, 1),
        "budget_s": plan.budget_s,
        "memory": memory_note(plan.spec),
        "model": "estimated by attnlab.bench.plan from the device's rates, not measured",
        "left_out": plan.left_out(),
        "unchecked": plan.unchecked,
    }
    env["wall_s"] = round(time.perf_counter() - started, 1)
    return {"env": env, "results": results}
