"""Measure the trained decoders' budgets: training time per recipe, checkpoint size, load and run time."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial

from attnlab.trained import load, run_dir

REPEATS = 3  # the machine is shared: take the median of a few


def median_time(fn, repeats: int = REPEATS) -> tuple[float, list[float]]:
    """Median wall time of fn() over a few calls, and every call's time."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main() -> None:
    """Print every figure, one line each."""
    for name in ("induction-2l", "induction-1l"):
        folder = run_dir(name)
        size = sum(p.stat().st_size for p in folder.iterdir())
        ckpt = max(p.stat().st_size for p in folder.glob("*.safetensors"))
        med, times = median_time(partial(load, name))
        d = load(name)
        seq = [d.vocab[i % 7] for i in range(40)]
        run_med, _ = median_time(partial(d.run, seq), 20)
        print(
            f"{name}: run {size / 2**20:.2f} MB, checkpoint {ckpt / 1024:.0f} KB, load {med * 1000:.0f} ms "
            f"(all {[round(t * 1000) for t in times]}), 40-symbol run {run_med * 1000:.1f} ms"
        )
        if "--train" in sys.argv:
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [sys.executable, "-m", "attnlab.train", name, "--out", tmp]
                med, times = median_time(partial(subprocess.run, cmd, check=True, capture_output=True))
            print(f"{name}: training {med:.1f} s median (all {[round(t, 1) for t in times]})")


if __name__ == "__main__":
    main()
