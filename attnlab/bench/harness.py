"""The timing harness behind `python -m attnlab.bench` and the Benchmark page (torch + numpy only).

Every (dtype, T, implementation) becomes one result row. Inputs are built outside the timed
region; each row is a probe call (its output checked against a float64 reference), a memory
pass of its own, then warm-up and timed repetitions. On CUDA the clock is a pair of CUDA
events per repetition; on CPU it is time.perf_counter. An SDPA backend is forced with
torch.nn.attention.sdpa_kernel, so one that cannot run says why instead of falling back.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import platform
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from attnlab.attention import attention_steps
from attnlab.bench.limits import DTYPES, as_dtype
from attnlab.bench.peaks import PEAK_SOURCE, known_peak_tflops
from attnlab.tiled import tiled_attention

IMPLS: tuple[str, ...] = (
    "explicit",
    "tiled",
    "sdpa",
    "sdpa-math",
    "sdpa-flash",
    "sdpa-efficient",
    "sdpa-cudnn",
    "mha",
)
SDPA_BACKENDS: dict[str, SDPBackend] = {
    "sdpa-math": SDPBackend.MATH,
    "sdpa-flash": SDPBackend.FLASH_ATTENTION,
    "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION,
    "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
}
RESULT_KEYS: tuple[str, ...] = (
    "impl",
    "device",
    "dtype",
    "batch",
    "heads",
    "seq_len",
    "head_dim",
    "causal",
    "median_ms",
    "p20_ms",
    "p80_ms",
    "tflops",
    "peak_mem_bytes",
    "max_abs_err",
    "status",
)
REFERENCE_CHUNK_BYTES = 64 * 2**20  # float64 score rows held at once while computing the reference

Progress = Callable[[int, int, dict], None]  # on_progress(done, total, row)


@dataclass(frozen=True)
class BenchConfig:
    """One sweep: every dtype x sequence length x implementation becomes a result row."""

    device: str = "auto"  # auto | cpu | cuda (auto picks CUDA when present)
    dtypes: tuple[str, ...] = ("float32",)
    seq_lens: tuple[int, ...] = (256, 512, 1024)
    heads: int = 8
    head_dim: int = 64
    batch: int = 1
    causal: bool = False
    impls: tuple[str, ...] = IMPLS
    warmup: int = 3  # calls before timing starts (fewer if they already took min_time_s)
    min_reps: int = 5  # timed repetitions at least ...
    max_reps: int = 200  # ... and at most
    min_time_s: float = 0.3  # keep repeating until this much time was measured
    max_time_s: float = 5.0  # stop repeating past this (once 3 repetitions exist)
    seed: int = 0
    tiled_block: int = 128  # block_q = block_k of the tiled implementation
    check: bool = True  # compute max_abs_err against a float64 reference
    threads: int | None = None  # torch.set_num_threads for the run (None: leave torch's default)

    def __post_init__(self) -> None:
        bad_impls = [i for i in self.impls if i not in IMPLS]
        bad_dtypes = [d for d in self.dtypes if d not in DTYPES]
        if bad_impls:
            raise ValueError(f"unknown impl(s) {bad_impls}; choose from {', '.join(IMPLS)}")
        if bad_dtypes:
            raise ValueError(f"unknown dtype(s) {bad_dtypes}; choose from {', '.join(DTYPES)}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")
        sizes = {"batch": self.batch, "heads": self.heads, "head_dim": self.head_dim}
        sizes.update({f"seq_len {t}": t for t in self.seq_lens})
        for name, value in sizes.items():
            if int(value) < 1:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        if not (self.impls and self.dtypes and self.seq_lens):
            raise ValueError("need at least one impl, one dtype and one sequence length")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be a positive integer, got {self.threads}")
        if self.min_reps < 1 or self.max_reps < self.min_reps or self.warmup < 0:
            raise ValueError("need 0 <= warmup and 1 <= min_reps <= max_reps")

    @property
    def total(self) -> int:
        """Number of result rows the sweep produces."""
        return len(self.dtypes) * len(self.seq_lens) * len(self.impls)


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


def attention_flops(batch: int, heads: int, t_q: int, t_k: int, head_dim: int, causal: bool) -> float:
    """Forward FLOPs of attention: 2 matmuls of 2*T_q*T_k*d each per head, halved for causal."""
    flops = 4.0 * batch * heads * t_q * t_k * head_dim
    return flops / 2 if causal else flops


def mha_projection_flops(batch: int, seq_len: int, embed: int) -> float:
    """The four (E, E) projections that nn.MultiheadAttention adds around attention."""
    return 8.0 * batch * seq_len * embed * embed


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
        "flops": "4*B*H*T^2*d (halved when causal); mha adds its projections, 8*B*T*E^2",
        "peak_mem": (
            "max_memory_allocated in a pass of its own, minus what was allocated before the call"
            if device.type == "cuda"
            else "torch.profiler(profile_memory=True) in a pass of its own: the CPU allocator's "
            "peak of live bytes during the call (inputs excluded)"
        ),
        "reference": "float64 attention on the same (rounded) inputs, computed in row chunks",
        "config": asdict(config),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env["capability"] = f"{props.major}.{props.minor}"
        env["gpu_memory_bytes"] = int(props.total_memory)
        env["allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
    return env


# ---------------------------------------------------------------------------------------------
# the float64 reference


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v in float64, a chunk of query rows at a time to bound memory."""
    q, k, v = q.double(), k.double(), v.double()
    lead, t_q, t_k = q.shape[:-2], q.size(-2), k.size(-2)
    per_row = max(1, math.prod(lead) * t_k * 8)
    chunk = max(1, min(t_q, REFERENCE_CHUNK_BYTES // per_row))
    scale = 1.0 / math.sqrt(q.size(-1))
    out = []
    for r0 in range(0, t_q, chunk):
        rows = slice(r0, min(r0 + chunk, t_q))
        s = (q[..., rows, :] @ k.transpose(-2, -1)) * scale  # (B, H, chunk, T_k)
        if causal:
            q_idx = torch.arange(rows.start, rows.stop, device=q.device)
            s = s.masked_fill(torch.arange(t_k, device=q.device)[None, :] > q_idx[:, None], -math.inf)
        out.append(torch.softmax(s, dim=-1) @ v)  # (B, H, chunk, d)
        del s
    return torch.cat(out, dim=-2)


def reference_mha(mha: nn.MultiheadAttention, x: torch.Tensor, causal: bool) -> torch.Tensor:
    """nn.MultiheadAttention's output recomputed in float64 with the chunked reference attention."""
    x = x.double()
    w_in, b_in = mha.in_proj_weight.double(), mha.in_proj_bias.double()
    q, k, v = F.linear(x, w_in, b_in).chunk(3, dim=-1)  # (B, T, E) each
    b, t, e = q.shape
    h = mha.num_heads

    def split(z: torch.Tensor) -> torch.Tensor:
        return z.reshape(b, t, h, e // h).transpose(1, 2)  # (B, H, T, d)

    o = reference_attention(split(q), split(k), split(v), causal)  # (B, H, T, d)
    o = o.transpose(1, 2).reshape(b, t, e)
    return F.linear(o, mha.out_proj.weight.double(), mha.out_proj.bias.double())


# ---------------------------------------------------------------------------------------------
# implementations


@dataclass
class Case:
    """Inputs of one (dtype, T) point, built once outside every timed region."""

    device: torch.device
    dtype: torch.dtype
    causal: bool
    q: torch.Tensor  # (B, H, T, d)
    k: torch.Tensor
    v: torch.Tensor
    check: bool
    _ref: torch.Tensor | None = None
    _mha: dict = field(default_factory=dict)

    def reference(self) -> torch.Tensor:
        """Float64 reference for the attention output, computed on first use."""
        if self._ref is None:
            self._ref = reference_attention(self.q, self.k, self.v, self.causal)
        return self._ref

    def mha_parts(self, heads: int, head_dim: int, seed: int) -> dict:
        """The nn.MultiheadAttention module, its (B, T, H*d) input and causal mask, built once."""
        if not self._mha:
            e = heads * head_dim
            torch.manual_seed(seed)
            module = nn.MultiheadAttention(e, heads, batch_first=True, device=self.device, dtype=self.dtype)
            module.eval()
            gen = torch.Generator(device="cpu").manual_seed(seed + 7)
            x = torch.randn(self.q.size(0), self.q.size(-2), e, generator=gen).to(self.device, self.dtype)
            t = x.size(1)
            mask = torch.ones(t, t, dtype=torch.bool, device=self.device).triu(1) if self.causal else None
            self._mha.update(module=module, x=x, mask=mask)
        return self._mha


def _make_call(impl: str, case: Case, config: BenchConfig) -> tuple[Callable[[], torch.Tensor], object]:
    """(the call to time, the context it must run in: sdpa_kernel for a forced backend)."""
    q, k, v, causal = case.q, case.k, case.v, case.causal
    if impl == "explicit":
        return (lambda: attention_steps(q, k, v, is_causal=causal).output), contextlib.nullcontext()
    if impl == "tiled":
        b = config.tiled_block
        return (lambda: tiled_attention(q, k, v, is_causal=causal, block_q=b, block_k=b)), contextlib.nullcontext()
    if impl == "mha":
        parts = case.mha_parts(config.heads, config.head_dim, config.seed)
        module, x, mask = parts["module"], parts["x"], parts["mask"]

        def call() -> torch.Tensor:
            return module(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)[0]

        return call, contextlib.nullcontext()

    def sdpa() -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    if impl == "sdpa":
        return sdpa, contextlib.nullcontext()
    return sdpa, sdpa_kernel(SDPA_BACKENDS[impl])


def _reference_for(impl: str, case: Case, config: BenchConfig) -> torch.Tensor:
    """The float64 answer an implementation's output is held against."""
    if impl != "mha":
        return case.reference()
    parts = case.mha_parts(config.heads, config.head_dim, config.seed)
    return reference_mha(parts["module"], parts["x"], case.causal)


# ---------------------------------------------------------------------------------------------
# measurement


class Unsupported(Exception):
    """An implementation that cannot run here; the message is PyTorch's reason."""


def _sync(device: torch.device) -> None:
    """Wait for queued GPU work so a clock or memory counter reads the truth."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def is_oom(exc: BaseException) -> bool:
    """Out-of-memory from the CUDA caching allocator or the CPU allocator."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return "out of memory" in text or "can't allocate memory" in text


def _one_line(text: str, limit: int = 600) -> str:
    """Collapse PyTorch's multi-line reasons to one readable line."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
            raise Unsupported(_one_line("; ".join(said))) from exc


def _uses_mha_fast_path(call: Callable[[], torch.Tensor]) -> bool:
    """Profile one call: did nn.MultiheadAttention dispatch to its fused native kernel?"""
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU]) as prof:
        call()
    return any("_native_multi_head_attention" in e.name for e in prof.events())


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
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = call()
        del out
    try:
        events = prof.profiler.kineto_results.events()
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


def _free(device: torch.device, collect: bool = False) -> None:
    """Give cached GPU memory back after a row; after an OOM also collect garbage (slow: ~0.1 s)."""
    if collect:
        gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _row(impl: str, device: torch.device, dtype: str, t: int, config: BenchConfig, **values) -> dict:
    """A result row with every schema key, None where nothing was measured."""
    row = {
        "impl": impl,
        "device": device.type,
        "dtype": dtype,
        "batch": config.batch,
        "heads": config.heads,
        "seq_len": t,
        "head_dim": config.head_dim,
        "causal": config.causal,
        "median_ms": None,
        "p20_ms": None,
        "p80_ms": None,
        "tflops": None,
        "peak_mem_bytes": None,
        "max_abs_err": None,
        "status": "ok",
    }
    row.update(values)
    return row


def _finite(x: float | None) -> float | None:
    """JSON has no NaN or inf: store None instead."""
    return None if x is None or not math.isfinite(x) else float(x)


def measure(impl: str, case: Case, config: BenchConfig, dtype_name: str) -> dict:
    """One result row: probe + error check, memory pass, timing pass; oom / unsupported recorded."""
    device, t = case.device, case.q.size(-2)
    oom = False
    try:
        call, ctx = _make_call(impl, case, config)
        with ctx:
            out = _probe(call, device)
            err = None
            if config.check:
                ref = _reference_for(impl, case, config)
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
        return _row(impl, device, dtype_name, t, config, status=f"unsupported: {exc}")
    except Exception as exc:
        if not is_oom(exc):
            raise
        oom = True
    finally:
        _free(device)
    if oom:  # outside the except block, so the traceback's frames no longer pin the tensors
        _free(device, collect=True)
        return _row(impl, device, dtype_name, t, config, status="oom")
    p20, median, p80 = (float(x) for x in np.percentile(times, [20, 50, 80]))
    flops = attention_flops(config.batch, config.heads, t, t, config.head_dim, config.causal)
    if impl == "mha":
        flops += mha_projection_flops(config.batch, t, config.heads * config.head_dim)
    tflops = flops / (median * 1e-3) / 1e12 if median > 0 else None
    return _row(
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
    )


def _build_case(device: torch.device, dtype_name: str, t: int, config: BenchConfig) -> Case:
    """Seeded (B, H, T, d) inputs on the device, rounded to the dtype once."""
    gen = torch.Generator(device="cpu").manual_seed(config.seed + t)
    shape = (config.batch, config.heads, t, config.head_dim)
    q, k, v = (torch.randn(shape, generator=gen).to(device, as_dtype(dtype_name)) for _ in range(3))
    return Case(device, as_dtype(dtype_name), config.causal, q, k, v, config.check)


def _try_build_case(device: torch.device, dtype_name: str, t: int, config: BenchConfig) -> Case | None:
    """The inputs of one point, or None when they do not fit in memory."""
    try:
        return _build_case(device, dtype_name, t, config)
    except Exception as exc:
        if not is_oom(exc):
            raise
    return None


def iter_benchmark(config: BenchConfig, device: torch.device | None = None) -> Iterator[dict]:
    """Yield one result row at a time (dtype, then T, then impl), so a caller can show progress."""
    device = device or resolve_device(config.device)
    with torch.inference_mode():
        for dtype_name in config.dtypes:
            for t in config.seq_lens:
                case = _try_build_case(device, dtype_name, t, config)
                if case is None:  # the inputs alone do not fit: every row of this point is oom
                    _free(device, collect=True)
                    for impl in config.impls:
                        yield _row(impl, device, dtype_name, t, config, status="oom")
                    continue
                for impl in config.impls:
                    yield measure(impl, case, config, dtype_name)
                del case
                _free(device)


def run_benchmark(config: BenchConfig, on_progress: Progress | None = None) -> dict:
    """Run the whole sweep and return {"env": ..., "results": [...]}, calling on_progress after each row."""
    device = resolve_device(config.device)
    with _torch_threads(config.threads):
        env = environment(device, config)
        results: list[dict] = []
        for row in iter_benchmark(config, device):
            results.append(row)
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
