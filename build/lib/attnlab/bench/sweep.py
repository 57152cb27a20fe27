"""The sweep: every dtype x T x implementation in order, inputs built once per point, one row each."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from attnlab.bench.config import BenchConfig, Progress
from attnlab.bench.env import environment, resolve_device
from attnlab.bench.impls import Case
from attnlab.bench.measure import blank_row, free, is_oom, measure
from attnlab.bench.memory import as_dtype
from attnlab.bench.row import ResultRow


def build_case(device: torch.device, dtype_name: str, t: int, config: BenchConfig) -> Case:
    """Seeded (B, H, T, d) inputs on the device, rounded to the dtype once."""
    gen = torch.Generator(device="cpu").manual_seed(config.seed + t)
    shape = (config.batch, config.heads, t, config.head_dim)
    q, k, v = (torch.randn(shape, generator=gen).to(device, as_dtype(dtype_name)) for _ in range(3))
    return Case(device, as_dtype(dtype_name), config.causal, q, k, v, config.check)


def _trybuild_case(device: torch.device, dtype_name: str, t: int, config: BenchConfig) -> Case | None:
    """The inputs of one point, or None when they do not fit in memory."""
    try:
        return build_case(device, dtype_name, t, config)
    except Exception as exc:
        if not is_oom(exc):
            raise
    return None


def iter_benchmark(config: BenchConfig, device: torch.device | None = None) -> Iterator[ResultRow]:
    """Yield one result row at a time (dtype, then T, then impl), so a caller can show progress."""
    device = device or resolve_device(config.device)
    with torch.inference_mode():
        for dtype_name in config.dtypes:
            for t in config.seq_lens:
                case = _trybuild_case(device, dtype_name, t, config)
                if case is None:  # the inputs alone do not fit: every row of this point is oom
                    free(device, collect=True)
                    for impl in config.impls:
                        yield blank_row(impl, device, dtype_name, t, config, status="oom")
                    continue
                for impl in config.impls:
                    yield measure(impl, case, config, dtype_name)
                del case
                free(device)


def run_benchmark(config: BenchConfig, on_progress: Progress | None = None) -> dict:
    """Run the whole sweep and return the contract's JSON document, calling on_progress after each row."""
    device = resolve_device(config.device)
    with _torch_threads(config.threads):
        env = environment(device, config)
        results: list[dict] = []
        for row in iter_benchmark(config, device):
            results.append(row.to_dict())
            if on_progress is not None:
                on_progress(len(results), config.total, row)
    return {"env": env, "results": results}


@contextlib.contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Run with this many intra-op threads, then restore (it is process-wide)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
