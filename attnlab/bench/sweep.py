"""The sweep: every point (dtype, T) in order, inputs built once per point, one row per implementation."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict

import torch

from attnlab.bench.busy import BusyMeter
from attnlab.bench.config import BenchConfig, Point, Progress
from attnlab.bench.env import environment, resolve_device
from attnlab.bench.impls import Case
from attnlab.bench.measure import blank_row, free, is_oom, measure
from attnlab.bench.memory import as_dtype
from attnlab.bench.row import ResultRow


def build_case(device: torch.device, dtype_name: str, t: int, config: BenchConfig) -> Case:
    """Seeded inputs on the device, rounded to the dtype once: q (B, H, T, d), k and v (B, H_kv, T, d)."""
    gen = torch.Generator(device="cpu").manual_seed(config.seed + t)
    shapes = [(config.batch, h, t, config.head_dim) for h in (config.heads, config.kv_heads, config.kv_heads)]
    q, k, v = (torch.randn(shape, generator=gen).to(device, as_dtype(dtype_name)) for shape in shapes)
    return Case(device, as_dtype(dtype_name), config.causal, q, k, v, config.check, config.rule)


def _trybuild_case(device: torch.device, dtype_name: str, t: int, config: BenchConfig) -> Case | None:
    """The inputs of one point, or None when they do not fit in memory."""
    try:
        return build_case(device, dtype_name, t, config)
    except Exception as exc:
        if not is_oom(exc):
            raise
    return None


def iter_points(points: Iterable[Point], device: torch.device) -> Iterator[ResultRow]:
    """Yield one row per implementation of each point: measured, or with the status its plan gave it."""
    with torch.inference_mode():
        for point in points:
            config, dtype_name, t = point.config, point.dtype, point.seq_len
            case = _trybuild_case(device, dtype_name, t, config) if point.measured else None
            if point.measured and case is None:  # the inputs alone do not fit: every measured row is oom
                free(device, collect=True)
            for impl in point.impls:
                if impl in point.skip or case is None:
                    yield blank_row(impl, device, dtype_name, t, config, status=point.skip.get(impl, "oom"))
                else:
                    yield measure(impl, case, config, dtype_name)
            del case
            free(device)


Configs = BenchConfig | Sequence[BenchConfig]  # one sweep, or several run one after another (one per kv_heads)


def _listed(configs: Configs) -> list[BenchConfig]:
    """One config or several as a list; several must share device and threads (they run as one sweep)."""
    out = [configs] if isinstance(configs, BenchConfig) else list(configs)
    if not out or len({(c.device, c.threads) for c in out}) > 1:
        raise ValueError("need at least one config, all with the same device and threads")
    return out


def total_rows(configs: Configs) -> int:
    """Rows the sweep of these configs produces."""
    return sum(c.total for c in _listed(configs))


def iter_benchmark(configs: Configs, device: torch.device | None = None) -> Iterator[ResultRow]:
    """Yield one result row at a time (config, dtype, then T, then impl), so a caller can show progress."""
    listed = _listed(configs)
    points = [p for c in listed for p in c.points()]
    yield from iter_points(points, device or resolve_device(listed[0].device))


def _env(device: torch.device, listed: list[BenchConfig]) -> dict:
    """The env of the first config, and every config when there are several."""
    env = environment(device, listed[0])
    if len(listed) > 1:
        env["configs"] = [asdict(c) for c in listed]
    return env


def run_benchmark(configs: Configs, on_progress: Progress | None = None) -> dict:
    """Run the whole sweep and return the contract's JSON document, calling on_progress after each row."""
    listed = _listed(configs)
    device = resolve_device(listed[0].device)
    with torch_threads(listed[0].threads):
        env = _env(device, listed)
        meter = BusyMeter.start()
        results: list[dict] = []
        for row in iter_benchmark(listed, device):
            results.append(row.to_dict())
            if on_progress is not None:
                on_progress(len(results), total_rows(listed), row)
        env["machine_load"] = meter.read()
    return {"env": env, "results": results}


def sweep_documents(configs: Configs) -> Iterator[tuple[int, dict]]:
    """(rows done, the document so far) after each row: a live run can be stopped at any row and still be whole.

    Each document is a new dict (rows shared, never changed), its `machine_load` measured from the start to now.
    """
    listed = _listed(configs)
    device = resolve_device(listed[0].device)
    with torch_threads(listed[0].threads):
        env = _env(device, listed)
        meter = BusyMeter.start()
        results: list[dict] = []
        for row in iter_benchmark(listed, device):
            results.append(row.to_dict())
            yield len(results), {"env": {**env, "machine_load": meter.read()}, "results": list(results)}


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run with this many intra-op threads, then restore (it is process-wide)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
