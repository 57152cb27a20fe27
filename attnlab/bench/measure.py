"""Measuring one implementation at one point: a probe checked against float64, a memory pass, timed repetitions.

CUDA events time each repetition on a GPU, time.perf_counter on the CPU; an out-of-memory error
or a backend PyTorch cannot run becomes the row's status instead of stopping the sweep: `unsupported: ` and the
forced backend's own reason in one sentence (`attnlab.bench.reasons`), PyTorch's whole text in the row's `detail`.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import torch

from attnlab.bench.config import BenchConfig
from attnlab.bench.errors import is_oom, one_line
from attnlab.bench.impls import Case, NotHere, make_call, reference_for
from attnlab.bench.maskrule import MaskRule
from attnlab.bench.reasons import distil
from attnlab.bench.row import ResultRow
from attnlab.limits import MAX_RESULTS_DETAIL_CHARS, MAX_RESULTS_STATUS_CHARS


def attention_flops(batch: int, heads: int, t_q: int, t_k: int, head_dim: int, causal: bool) -> float:
    """Forward FLOPs of attention: 2 matmuls of 2*T_q*T_k*d each per head, halved for causal."""
    flops = 4.0 * batch * heads * t_q * t_k * head_dim
    return flops / 2 if causal else flops


def rule_flops(batch: int, heads: int, t: int, head_dim: int, rule: MaskRule) -> float:
    """FLOPs of the (query, key) pairs a rule allows, 4*d per pair per head per batch item (contract 15).

    Full and causal keep DESIGN's count (T^2, and T^2 / 2 for causal, as FlashAttention's benchmark counts), so
    recorded runs stay comparable; a window or packed documents count their allowed pairs exactly.
    """
    if rule.kind in ("full", "causal"):
        return attention_flops(batch, heads, t, t, head_dim, rule.causal)
    return 4.0 * batch * heads * head_dim * rule.pairs(t)


def mha_projection_flops(batch: int, seq_len: int, embed: int) -> float:
    """The four (E, E) projections that nn.MultiheadAttention adds around attention."""
    return 8.0 * batch * seq_len * embed * embed


class Unsupported(Exception):
    """An implementation that cannot run here; the message is PyTorch's whole text (or attnlab's own sentence)."""


def _sync(device: torch.device) -> None:
    """Wait for queued GPU work so a clock or memory counter reads the truth."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _probe(call: Callable[[], torch.Tensor], device: torch.device) -> torch.Tensor:
    """First call; on failure raise Unsupported with PyTorch's warnings and error text as the reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
            _sync(device)
            return out
        except Exception as exc:
            if is_oom(exc):
                raise
            said = [str(w.message) for w in caught]
            said = list(dict.fromkeys(s for s in said if s.strip()))  # unique, in order
            said.append(str(exc) or type(exc).__name__)
            raise Unsupported(one_line("; ".join(said), MAX_RESULTS_DETAIL_CHARS)) from exc


def _uses_mha_fast_path(call: Callable[[], torch.Tensor]) -> bool:
    """Profile one call: did nn.MultiheadAttention dispatch to its fused native kernel?"""
    with _quiet_stderr(), _cpu_profile(profile_memory=False) as prof:
        call()
    return any("_native_multi_head_attention" in e.name for e in prof.function_events)


def _cpu_profile(profile_memory: bool) -> torch.autograd.profiler.profile:
    """The autograd profiler on the CPU: torch.profiler.profile's own start imports torch._inductor (seconds)."""
    return torch.autograd.profiler.profile(use_cpu=True, profile_memory=profile_memory)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence the profiler's C++ start/stop lines (kineto writes them straight to fd 2)."""
    try:
        saved = os.dup(2)
    except OSError:  # no real fd 2 (some embedded hosts): nothing to silence
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            sys.stderr.flush()
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _peak_memory_cuda(call: Callable[[], torch.Tensor], device: torch.device) -> int:
    """Peak bytes the call allocates on the GPU beyond what already lived there."""
    _sync(device)
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    out = call()
    _sync(device)
    peak = torch.cuda.max_memory_allocated(device) - base
    del out
    return int(peak)


def _peak_memory_cpu(call: Callable[[], torch.Tensor]) -> int | None:
    """Peak live bytes the CPU allocator hands out during the call, from the profiler's memory events."""
    with _quiet_stderr(), _cpu_profile(profile_memory=True) as prof:
        out = call()
        del out
    try:
        events = prof.kineto_results.events()
        allocs = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    except AttributeError:  # a torch without these internals: say nothing rather than guess
        return None
    live = peak = 0
    for _, nbytes in allocs:
        live += nbytes
        peak = max(peak, live)
    return int(peak)


def _time_once_ms(call: Callable[[], torch.Tensor], device: torch.device) -> float:
    """One timed call: CUDA events on the GPU, perf_counter on the CPU."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end))
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1e3


def time_call(call: Callable[[], torch.Tensor], device: torch.device, config: BenchConfig) -> list[float]:
    """Warm up, then repeat until min_reps and min_time_s are both met (bounded by max_*); ms per call."""
    spent = 0.0
    for i in range(config.warmup):
        if i > 0 and spent >= config.min_time_s:  # long calls: one warm-up is enough
            break
        t0 = time.perf_counter()
        call()
        _sync(device)
        spent += time.perf_counter() - t0
    _sync(device)
    times: list[float] = []
    while len(times) < config.max_reps:
        measured = sum(times) / 1e3
        if len(times) >= config.min_reps and measured >= config.min_time_s:
            break
        if len(times) >= 3 and measured >= config.max_time_s:
            break
        times.append(_time_once_ms(call, device))
    return times


def free(device: torch.device, collect: bool = False) -> None:
    """Give cached GPU memory back after a row; after an OOM also collect garbage (slow: ~0.1 s)."""
    if collect:
        gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def blank_row(impl: str, device: torch.device, dtype: str, t: int, config: BenchConfig, **values) -> ResultRow:
    """A result row for one point of the sweep, None wherever nothing was measured."""
    shape = (config.batch, config.heads, t, config.head_dim, config.causal)
    return ResultRow(impl, device.type, dtype, *shape, kv_heads=config.kv_heads, mask=config.mask, **values)


def unsupported_row(
    impl: str, device: torch.device, dtype: str, t: int, config: BenchConfig, said: str, mode: str | None
) -> ResultRow:
    """The row of an implementation that cannot run: its reason in one sentence, PyTorch's whole text apart."""
    sentence = one_line(distil(impl, said, device.type).sentence, MAX_RESULTS_STATUS_CHARS - len("unsupported: "))
    detail = None if sentence == said else said
    return blank_row(impl, device, dtype, t, config, status=f"unsupported: {sentence}", mode=mode, detail=detail)


def _finite(x: float | None) -> float | None:
    """JSON has no NaN or inf: store None instead."""
    return None if x is None or not math.isfinite(x) else float(x)


def measure(impl: str, case: Case, config: BenchConfig, dtype_name: str) -> ResultRow:
    """One result row: probe + error check, memory pass, timing pass; oom / unsupported recorded."""
    device, t = case.device, case.q.size(-2)
    oom, call = False, None
    try:
        try:
            call, ctx = make_call(impl, case, config)
        except NotHere as exc:
            raise Unsupported(str(exc)) from None
        with ctx:
            out = _probe(call, device)
            err = None
            if config.check:
                ref = reference_for(impl, case, config)
                err = _finite((out.double() - ref).abs().max().item())
                del ref
            del out
            if impl == "mha" and not _uses_mha_fast_path(call):
                raise Unsupported(
                    "nn.MultiheadAttention did not take its fast path (needs eval mode, no grad, "
                    "batch_first, self-attention, an even number of heads)"
                )
            peak = _peak_memory_cuda(call, device) if device.type == "cuda" else _peak_memory_cpu(call)
            times = time_call(call, device, config)
    except Unsupported as exc:
        mode = getattr(call, "mode", None)  # FlexAttention: compiled, or eager and why
        return unsupported_row(impl, device, dtype_name, t, config, str(exc), mode)
    except Exception as exc:
        if not is_oom(exc):
            raise
        oom = True
    finally:
        free(device)
    if oom:  # outside the except block, so the traceback's frames no longer pin the tensors
        free(device, collect=True)
        return blank_row(impl, device, dtype_name, t, config, status="oom")
    p20, median, p80 = (float(x) for x in np.percentile(times, [20, 50, 80]))
    flops = rule_flops(config.batch, config.heads, t, config.head_dim, config.rule)
    if impl == "mha":
        flops += mha_projection_flops(config.batch, t, config.heads * config.head_dim)
    tflops = flops / (median * 1e-3) / 1e12 if median > 0 else None
    return blank_row(
        impl,
        device,
        dtype_name,
        t,
        config,
        median_ms=median,
        p20_ms=p20,
        p80_ms=p80,
        tflops=_finite(tflops),
        peak_mem_bytes=peak,
        max_abs_err=err,
        mode=getattr(call, "mode", None),
    )
