"""How much memory an attention size needs, and the cap a CPU-only host refuses sizes above."""

from __future__ import annotations

import torch

MEMORY_CAP_BYTES = 512 * 2**20  # what one request may allocate on the hosted (CPU-only) app

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


def over_memory_cap(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    cap: int = MEMORY_CAP_BYTES,
) -> bool:
    """True when one self-attention matrix of this size is larger than the cap."""
    return attention_matrix_bytes(batch, heads, seq_len, seq_len, dtype) > cap


def memory_cap_message(
    batch: int,
    heads: int,
    seq_len: int,
    dtype: torch.dtype | str,
    cap: int = MEMORY_CAP_BYTES,
) -> str | None:
    """An English sentence naming the size and the cap when the size is refused, else None."""
    need = attention_matrix_bytes(batch, heads, seq_len, seq_len, dtype)
    if need <= cap:
        return None
    return (
        f"T={seq_len}: one attention matrix of {batch} x {heads} x {seq_len} x {seq_len} "
        f"{as_dtype(dtype)} takes {format_bytes(need)}, over this host's cap of {format_bytes(cap)}."
    )
