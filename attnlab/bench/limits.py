"""How much memory an attention size needs, and the cap a CPU-only host refuses sizes above."""

from __future__ import annotations

import torch

from attnlab.limits import MEMORY_CAP_BYTES

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
# mha 1.1; rounded up. Flash-style kernels and `tiled` hold only O(T) memory.
MATRIX_COPIES: dict[str, float] = {"explicit": 9.0, "sdpa-math": 3.0, "mha": 2.0}


def estimated_peak_bytes(
    batch: int, heads: int, seq_len: int, dtype: torch.dtype | str, impls: tuple[str, ...] = ()
) -> int:
    """Bytes the hungriest chosen implementation may need: at least one full attention matrix."""
    copies = max([1.0, *(MATRIX_COPIES.get(i, 0.0) for i in impls)])
    return int(copies * attention_matrix_bytes(batch, heads, seq_len, seq_len, dtype))


def over_memory_cap(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    cap: int = MEMORY_CAP_BYTES,
    impls: tuple[str, ...] = (),
) -> bool:
    """True when this size would pass the cap (one attention matrix, or what `impls` hold)."""
    return estimated_peak_bytes(batch, heads, seq_len, dtype, impls) > cap


def memory_cap_message(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    cap: int = MEMORY_CAP_BYTES,
    impls: tuple[str, ...] = (),
) -> str | None:
    """An English sentence naming the size, its need and the cap when the size is refused, else None."""
    need = estimated_peak_bytes(batch, heads, seq_len, dtype, impls)
    if need <= cap:
        return None
    matrix = attention_matrix_bytes(batch, heads, seq_len, seq_len, dtype)
    extra = f" (about {format_bytes(need)} for {', '.join(impls)})" if need > matrix else ""
    return (
        f"T={seq_len}: one attention matrix of {batch} x {heads} x {seq_len} x {seq_len} "
        f"{as_dtype(dtype)} takes {format_bytes(matrix)}{extra}, over this host's cap of {format_bytes(cap)}."
    )
