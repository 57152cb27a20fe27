"""One benchmark result row, typed: the schema of DESIGN contract 3 defined once, with its checks.

The sweep makes `ResultRow`s, the CLI and the page write them with `to_dict()` (keys in contract
order, then contract 15's `kv_heads` and `mask`, then `mode`: how FlexAttention ran, then `detail`: PyTorch's
whole text behind an `unsupported: <one sentence>` status), recorded files come back through `from_dict()`, and
figures and tables read their fields. Files written before contract 15 have no `kv_heads`, `mask` or `mode`: a
row read from one gets kv_heads = heads and the mask its `causal` says; files written before `detail` have none
(their statuses hold PyTorch's text itself, which `attnlab.bench.reasons` distils as the CLI now does).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from attnlab.bench.maskrule import SPEC, rule_of

STATUSES = ("ok", "oom")  # plus "unsupported: <the reason in one sentence>"
INT_FIELDS = ("batch", "heads", "seq_len", "head_dim")
NUMBER_FIELDS = ("median_ms", "p20_ms", "p80_ms", "tflops", "peak_mem_bytes", "max_abs_err")
MODES = ("compiled", "eager")  # plus "eager: <why a compile was not used>"


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
    kv_heads: int | None = None  # key/value heads (None when built: heads)
    mask: str | None = None  # full | causal | window:W | documents:N (None when built: from `causal`)
    mode: str | None = None  # flex only: compiled, eager, or "eager: why"; None for every other implementation
    detail: str | None = None  # unsupported rows: PyTorch's whole text (warnings, then the error), one line

    def __post_init__(self) -> None:
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.mask is None:
            object.__setattr__(self, "mask", "causal" if self.causal else "full")

    @property
    def ok(self) -> bool:
        """The row was timed (not out of memory, not unsupported)."""
        return self.status == "ok"

    @property
    def unsupported_reason(self) -> str | None:
        """Why the implementation cannot run here, as the status says it (PyTorch's text in files before `detail`)."""
        return self.status.removeprefix("unsupported: ") if self.status.startswith("unsupported: ") else None

    @property
    def full_reason(self) -> str | None:
        """Everything PyTorch said about an unsupported row: `detail` where the file kept it, else the status."""
        return None if self.unsupported_reason is None else self.detail or self.unsupported_reason

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the contract, keys in schema order."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResultRow:
        """A row read back from JSON (call `row_problem` first: this trusts its input; new keys may be absent)."""
        return cls(**{key: data[key] for key in REQUIRED_KEYS}, **{key: data.get(key) for key in OPTIONAL_KEYS})


RESULT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(ResultRow))
OPTIONAL_KEYS = ("kv_heads", "mask", "mode", "detail")  # contract 15's fields, flex's mode, PyTorch's whole text
REQUIRED_KEYS = tuple(k for k in RESULT_KEYS if k not in OPTIONAL_KEYS)  # contract 3's row


def _is_num(x: object) -> bool:
    """A JSON number (bools are not numbers here)."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def row_problem(
    data: object, impls: tuple[str, ...], dtypes: tuple[str, ...], max_size: int, max_status: int, max_detail: int = 0
) -> tuple[str, dict] | None:
    """Why a JSON value is not a result row the page can draw, as (reason, fields), or None.

    Reasons name `bench_errors.row_<reason>`; fields hold outside values as they came (the caller clips them).
    """
    if not isinstance(data, dict):
        return "not_object", {}
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        return "missing", {"keys": ", ".join(missing)}
    status = data["status"]
    if not isinstance(status, str) or not (status in STATUSES or status.startswith("unsupported: ")):
        return "status", {"status": status}
    if len(status) > max_status:
        return "text_long", {"field": "status", "cap": max_status}
    for key, allowed in (("impl", impls), ("dtype", dtypes)):
        if data[key] not in allowed:
            return key, {"value": data[key], "allowed": ", ".join(allowed)}
    if not isinstance(data["device"], str) or not data["device"].isidentifier() or len(data["device"]) > 16:
        return "device", {"value": data["device"]}
    for key in INT_FIELDS:
        if type(data[key]) is not int or not 1 <= data[key] <= max_size:
            return "size", {"field": key, "value": data[key], "cap": max_size}
    if not isinstance(data["causal"], bool):
        return "causal", {"value": data["causal"]}
    for key in NUMBER_FIELDS:
        value = data[key]
        if value is None:
            continue
        if not _is_num(value):
            return "number", {"field": key, "value": value}
        if not math.isfinite(value):
            return "not_finite", {"field": key, "value": value}
        if key == "peak_mem_bytes" and not float(value).is_integer():  # bytes: 65536.0 is fine, 1.5 is not
            return "number", {"field": key, "value": value}
        if value < 0:
            return "negative", {"field": key, "value": value}
    timings = [data[k] for k in ("p20_ms", "median_ms", "p80_ms")]
    if status == "ok" and not all(_is_num(x) and x > 0 for x in timings):
        return "no_timing", {}
    if status == "ok" and not timings[0] <= timings[1] <= timings[2]:
        return "order", {"p20": timings[0], "median": timings[1], "p80": timings[2]}
    if status != "ok" and any(data[k] is not None for k in NUMBER_FIELDS):
        return "numbers_not_ok", {"status": status}
    return _modern_problem(data, max_status, max_detail or max_status)


def _modern_problem(data: dict, max_status: int, max_detail: int) -> tuple[str, dict] | None:
    """Contract 15's fields when present: kv_heads divides heads, a mask rule that agrees with `causal`, flex's mode."""
    kv = data.get("kv_heads")
    if kv is not None and (type(kv) is not int or not 1 <= kv <= data["heads"] or data["heads"] % kv):
        return "kv_heads", {"value": kv, "heads": data["heads"]}
    mask = data.get("mask")
    if mask is not None:
        if not isinstance(mask, str) or len(mask) > 40 or SPEC.fullmatch(mask) is None:
            return "mask", {"value": mask}
        try:
            rule = rule_of(mask)
            rule.check(data["seq_len"])
        except ValueError:
            return "mask", {"value": mask}
        if rule.causal != data["causal"]:
            return "mask_causal", {"value": mask, "causal": data["causal"]}
    mode = data.get("mode")
    if mode is not None:
        if not isinstance(mode, str) or not (mode in MODES or mode.startswith("eager: ")):
            return "mode", {"value": mode}
        if len(mode) > max_status:
            return "text_long", {"field": "mode", "cap": max_status}
    detail = data.get("detail")
    if detail is not None and not isinstance(detail, str):
        return "detail", {"value": detail}
    if detail is not None and len(detail) > max_detail:
        return "text_long", {"field": "detail", "cap": max_detail}
    return None
