"""What one benchmark sweep measures: implementations, SDPA backends, a validated `BenchConfig` and its `Point`s."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from torch.nn.attention import SDPBackend

from attnlab.bench.maskrule import MaskRule, rule_of
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
    "flex",
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
    causal: bool = False  # kept in step with `mask`: True exactly when the rule is causal
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
    kv_heads: int | None = None  # key/value heads, a divisor of heads (None: heads; fewer: grouped-query attention)
    mask: str | None = None  # full | causal | window:W | documents:N (None: causal or full, from `causal`)
    flex_compile: bool = True  # torch.compile FlexAttention where the machine can (False: always eager)

    def __post_init__(self) -> None:
        rule = rule_of(self.mask, self.causal)  # ValueError with one line for a rule that means nothing
        if self.causal and not rule.causal:
            raise ValueError(f"causal=True and mask {rule.spec!r} disagree: give one of them")
        object.__setattr__(self, "mask", rule.spec)
        object.__setattr__(self, "causal", rule.causal)
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        self._check()
        for t in self.seq_lens:
            rule.check(t)

    @property
    def rule(self) -> MaskRule:
        """The mask rule every row of this config uses."""
        return rule_of(self.mask)

    @property
    def group(self) -> int:
        """Query heads per key/value head (1: every head its own keys and values)."""
        return self.heads // self.kv_heads

    def _check(self) -> None:
        """Refuse sizes, names and bounds that mean nothing, naming them."""
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
        if int(self.kv_heads) < 1 or int(self.heads) % int(self.kv_heads):
            raise ValueError(f"kv_heads must divide heads ({self.heads}), got {self.kv_heads}")

    @property
    def total(self) -> int:
        """Number of result rows the sweep produces."""
        return len(self.dtypes) * len(self.seq_lens) * len(self.impls)

    def points(self) -> tuple[Point, ...]:
        """Every (dtype, T) of the sweep with all its implementations, dtype first, then T."""
        return tuple(Point(self, d, t, self.impls) for d in self.dtypes for t in self.seq_lens)


@dataclass(frozen=True)
class Point:
    """One (dtype, T) under one config: its rows in order; `skip` holds those a plan left out, with their status."""

    config: BenchConfig  # batch, heads, head_dim, causal, timing, check for this point
    dtype: str
    seq_len: int
    impls: tuple[str, ...]  # every row of the point, in the order they are written
    skip: Mapping[str, str] = field(default_factory=dict)  # impl -> "oom" or "unsupported: why", not measured

    @property
    def measured(self) -> tuple[str, ...]:
        """The implementations this point runs."""
        return tuple(i for i in self.impls if i not in self.skip)


Progress = Callable[[int, int, ResultRow], None]  # on_progress(done, total, row)
