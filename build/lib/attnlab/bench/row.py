"""One benchmark result row, typed: the schema of DESIGN contract 3 defined once, with its checks.

The sweep makes `ResultRow`s, the CLI and the page write them with `to_dict()` (keys in contract
order), recorded files come back through `from_dict()`, and figures and tables read their fields.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

STATUSES = ("ok", "oom")  # plus "unsupported: <PyTorch's reason>"
INT_FIELDS = ("batch", "heads", "seq_len", "head_dim")
NUMBER_FIELDS = ("median_ms", "p20_ms", "p80_ms", "tflops", "peak_mem_bytes", "max_abs_err")


@dataclass(frozen=True)
class ResultRow:
    """What one (implementation, dtype, T) point measured; None where nothing was measured."""

    impl: str
    device: str
    dtype: str
    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool
    median_ms: float | None = None
    p20_ms: float | None = None
    p80_ms: float | None = None
    tflops: float | None = None
    peak_mem_bytes: int | None = None
    max_abs_err: float | None = None
    status: str = "ok"

    @property
    def ok(self) -> bool:
        """The row was timed (not out of memory, not unsupported)."""
        return self.status == "ok"

    @property
    def unsupported_reason(self) -> str | None:
        """PyTorch's reason when the implementation cannot run here."""
        return self.status.removeprefix("unsupported: ") if self.status.startswith("unsupported: ") else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the contract, keys in schema order."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResultRow:
        """A row read back from JSON (call `problem` first: this trusts its input)."""
        return cls(**{key: data[key] for key in RESULT_KEYS})


RESULT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(ResultRow))


def _is_num(x: object) -> bool:
    """A JSON number (bools are not numbers here)."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def problem(data: object, impls: tuple[str, ...]) -> str | None:
    """Why a JSON object is not a valid result row, or None."""
    if not isinstance(data, dict):
        return "is not an object"
    missing = [k for k in RESULT_KEYS if k not in data]
    if missing:
        return f"lacks {missing}"
    status = data["status"]
    if not isinstance(status, str) or not (status in STATUSES or status.startswith("unsupported: ")):
        return f"status must be ok, oom or 'unsupported: why', got {status!r}"
    if data["impl"] not in impls:
        return f"impl {data['impl']!r} is not one of {impls}"
    if not all(isinstance(data[k], int) and not isinstance(data[k], bool) and data[k] > 0 for k in INT_FIELDS):
        return f"needs positive integers for {INT_FIELDS}"
    if (
        not isinstance(data["causal"], bool)
        or not isinstance(data["dtype"], str)
        or not isinstance(data["device"], str)
    ):
        return "needs a boolean causal and string device and dtype"
    if any(data[k] is not None and not _is_num(data[k]) for k in NUMBER_FIELDS):
        return f"has a non-numeric value in {NUMBER_FIELDS}"
    if status == "ok" and not all(_is_num(data[k]) for k in ("median_ms", "p20_ms", "p80_ms")):
        return "is ok but has no timings"
    return None
