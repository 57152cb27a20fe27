"""What one benchmark sweep measures: the implementations, the SDPA backends, and a validated `BenchConfig`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch.nn.attention import SDPBackend

from attnlab.bench.memory import DTYPES
from attnlab.bench.row import ResultRow

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


Progress = Callable[[int, int, ResultRow], None]  # on_progress(done, total, row)
