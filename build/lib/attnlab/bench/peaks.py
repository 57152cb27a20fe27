"""Vendor peak throughput for a few known GPUs, so a measured TFLOP/s can be read as a share of it.

Dense (no sparsity) figures from NVIDIA's datasheets, in TFLOP/s. float32 is the plain FP32
rate: PyTorch does not use TF32 for matmuls unless asked to (torch.backends.cuda.matmul.allow_tf32).
float64 is the FP64 tensor-core rate. An unknown device gets None, never a guess.
"""

from __future__ import annotations

# (substring of torch.cuda.get_device_name(), peaks by dtype); the first match wins, so the
# more specific names come first.
KNOWN_PEAKS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H200", {"float16": 989.4, "bfloat16": 989.4, "float32": 66.9, "float64": 66.9}),
    ("H100 PCIe", {"float16": 756.0, "bfloat16": 756.0, "float32": 51.2, "float64": 51.2}),
    ("H100 NVL", {"float16": 835.0, "bfloat16": 835.0, "float32": 60.0, "float64": 60.0}),
    ("H100", {"float16": 989.4, "bfloat16": 989.4, "float32": 66.9, "float64": 66.9}),  # SXM (HBM3)
    ("A100", {"float16": 312.0, "bfloat16": 312.0, "float32": 19.5, "float64": 19.5}),
)

PEAK_SOURCE = "NVIDIA datasheets, dense tensor-core rates (fp16/bf16, fp64) and plain FP32 (no TF32)"


def known_peak_tflops(device_name: str | None, dtype: str) -> float | None:
    """Datasheet peak TFLOP/s of this device for this dtype, or None when the device is not in the table."""
    if not device_name:
        return None
    for needle, peaks in KNOWN_PEAKS:
        if needle.lower() in device_name.lower():
            return peaks.get(dtype)
    return None


def peak_share(dtype: str, tflops: float | None, env: dict) -> float | None:
    """Measured TFLOP/s as a fraction of the device's datasheet peak for this dtype (None if unknown)."""
    peak = (env.get("peak_tflops") or {}).get(dtype)
    if not peak or tflops is None:
        return None
    return float(tflops) / float(peak)
