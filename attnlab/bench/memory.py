"""How much memory an attention size needs, against the cap a CPU-only host refuses sizes above."""

from __future__ import annotations

import torch

from attnlab.bench.maskrule import MaskRule, rule_of
from attnlab.limits import MEMORY_CAP_BYTES

Shape = tuple[int, MaskRule] | None  # (kv_heads, mask rule) of a point; None: every head its own keys, no mask

__all__ = ["MEMORY_CAP_BYTES", "MATRIX_COPIES", "DTYPES"]


DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}


def as_dtype(dtype: torch.dtype | str) -> torch.dtype:
    """Accept a torch dtype or one of the names in DTYPES ('float16', ...)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return DTYPES[str(dtype)]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; choose from {', '.join(DTYPES)}") from None


def attention_matrix_bytes(batch: int, heads: int, t_q: int, t_k: int, dtype: torch.dtype | str) -> int:
    """Bytes of one (B, H, T_q, T_k) score matrix: what the explicit and math paths hold several of."""
    itemsize = torch.empty((), dtype=as_dtype(dtype)).element_size()
    return int(batch) * int(heads) * int(t_q) * int(t_k) * itemsize


def format_bytes(n: int | float) -> str:
    """1536 -> '1.5 KiB': binary units, as the cap is stated."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover - loop always returns


# Peak bytes of one call divided by one (B, H, T, T) matrix, measured with the CPU profiler
# (torch 2.13, float32, T=2048, 8 heads): explicit 8.0 (it keeps every stage), sdpa-math 2.3,
# mha 1.1; eager FlexAttention 3.3 (T=1024, 4 heads; compiled it holds O(T), but a compile may fail);
# rounded up. Flash-style kernels and `tiled` hold only O(T) memory.
MATRIX_COPIES: dict[str, float] = {"explicit": 9.0, "sdpa-math": 3.0, "mha": 2.0, "flex": 4.0}
REFERENCE_CHUNK_BYTES = 64 * 2**20  # float64 score rows the reference holds at once (two such buffers live)
FLOAT64 = 8


def _impl_bytes(
    impl: str, batch: int, heads: int, seq_len: int, head_dim: int, item: int, check: bool, shape: Shape = None
) -> int:
    """What one implementation's row adds on top of the inputs: its own peak, and the float64 reference.

    `shape` is (kv_heads, mask rule): the dense bool mask a rule needs (twice for mha, which inverts it), and the
    copies of grouped keys and values that the explicit and tiled paths repeat to every head.
    """
    kv_heads, rule = shape or (heads, None)
    matrix = batch * heads * seq_len * seq_len * item
    vectors = batch * heads * seq_len * head_dim  # elements of one (B, H, T, d) tensor
    own = int(MATRIX_COPIES.get(impl, 1.0) * matrix) + vectors * item  # working set plus the output
    if rule is not None and rule.dense_needed and impl != "flex":
        own += seq_len * seq_len * (2 if impl == "mha" else 1)
    if kv_heads != heads and impl in ("explicit", "tiled"):
        own += 2 * vectors * item
    reference = 0
    if check:  # float64 copies of q, k, v and the output, plus two chunks of score rows
        chunk = min(REFERENCE_CHUNK_BYTES, batch * heads * seq_len * seq_len * FLOAT64)
        reference = 4 * vectors * FLOAT64 + 2 * chunk
    if impl == "mha":  # the module's four (E, E) projections, its (B, T, E) input, and all of it again in float64
        embed = heads * head_dim
        weights, x = 4 * embed * embed + 4 * embed, batch * seq_len * embed
        own += (weights + x) * item
        reference += (weights + 4 * x) * FLOAT64 if check else 0
    return own + reference


def point_shape(heads: int, kv_heads: int | None, mask: MaskRule | str | None) -> Shape:
    """(kv_heads, rule) for the estimates, None when there is neither a group nor a mask to count."""
    kv = heads if kv_heads is None else int(kv_heads)
    rule = rule_of(mask)
    return None if kv == heads and not rule.dense_needed else (kv, rule)


def _inputs_bytes(batch: int, heads: int, seq_len: int, head_dim: int, item: int, shape: Shape) -> int:
    """q (B, H, T, d), and k and v with their key/value heads."""
    kv_heads = shape[0] if shape else heads
    return (heads + 2 * kv_heads) * batch * seq_len * head_dim * item


def estimated_peak_bytes(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    impls: tuple[str, ...] = (),
    head_dim: int = 64,
    check: bool = True,
    *,
    kv_heads: int | None = None,
    mask: MaskRule | str | None = None,
) -> int:
    """Bytes one Benchmark point may hold at its peak: the inputs plus the hungriest row (at least one matrix).

    Rows run one after another, so their peaks do not add up; the inputs live through all of them.
    """
    item = torch.empty((), dtype=as_dtype(dtype)).element_size()
    shape = point_shape(heads, kv_heads, mask)
    inputs = _inputs_bytes(batch, heads, seq_len, head_dim, item, shape)
    rows = [_impl_bytes(i, batch, heads, seq_len, head_dim, item, check, shape) for i in impls]
    return inputs + max([attention_matrix_bytes(batch, heads, seq_len, seq_len, dtype), *rows])


def row_peak_bytes(
    impl: str,
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    head_dim: int,
    check: bool = True,
    linear: bool = False,
    *,
    kv_heads: int | None = None,
    mask: MaskRule | str | None = None,
) -> int:
    """Bytes one row holds at its peak, inputs included, with no one-matrix floor: what the record plan checks.

    `linear`: the implementation holds no T x T matrix (a flash-style kernel, the tiled path), only its output.
    """
    item = torch.empty((), dtype=as_dtype(dtype)).element_size()
    shape = point_shape(heads, kv_heads, mask)
    inputs = _inputs_bytes(batch, heads, seq_len, head_dim, item, shape)
    own = _impl_bytes(impl, batch, heads, seq_len, head_dim, item, check, shape)
    if linear:
        own -= int(MATRIX_COPIES.get(impl, 1.0) * batch * heads * seq_len * seq_len * item)
    return inputs + own


def over_memory_cap(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    cap: int = MEMORY_CAP_BYTES,
    impls: tuple[str, ...] = (),
    head_dim: int = 64,
) -> bool:
    """True when this size would pass the cap (see `estimated_peak_bytes`)."""
    return estimated_peak_bytes(batch, heads, seq_len, dtype, impls, head_dim) > cap


def memory_cap_message(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    cap: int = MEMORY_CAP_BYTES,
    impls: tuple[str, ...] = (),
    head_dim: int = 64,
) -> str | None:
    """An English sentence naming the size, its need and the cap when the size is refused, else None."""
    need = estimated_peak_bytes(batch, heads, seq_len, dtype, impls, head_dim)
    if need <= cap:
        return None
    matrix = attention_matrix_bytes(batch, heads, seq_len, seq_len, dtype)
    extra = f" (about {format_bytes(need)} for {', '.join(impls)})" if impls else ""
    return (
        f"T={seq_len}: one attention matrix of {batch} x {heads} x {seq_len} x {seq_len} "
        f"{as_dtype(dtype)} takes {format_bytes(matrix)}{extra}, over this host's cap of {format_bytes(cap)}."
    )
