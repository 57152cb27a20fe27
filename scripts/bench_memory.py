"""How much server memory one Benchmark run really takes, against the estimate the page refuses sizes with.

usage: python scripts/bench_memory.py [--out FILE.json]
Each case runs the page's own harness in a fresh process and reports its peak RSS growth
(ru_maxrss after minus before) next to `estimated_peak_bytes` for the same size and impls.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from attnlab.bench.memory import estimated_peak_bytes, format_bytes

CASES = [  # (impls, batch, heads, seq_len, head_dim, dtype)
    (("explicit",), 1, 8, 1024, 64, "float32"),
    (("sdpa-math",), 1, 8, 1024, 64, "float32"),
    (("tiled",), 1, 8, 2048, 64, "float32"),
    (("sdpa",), 1, 8, 2048, 64, "float32"),
    (("mha",), 1, 16, 512, 128, "float32"),
    (("mha",), 1, 32, 256, 128, "float32"),
    (("explicit", "tiled", "sdpa", "sdpa-math", "sdpa-flash"), 1, 4, 1024, 64, "float32"),
    (("explicit",), 1, 4, 1024, 256, "float64"),
]
CHILD = """
import json, resource, sys
import torch
from attnlab.bench import BenchConfig, run_benchmark
impls, batch, heads, t, d, dtype = json.loads(sys.argv[1])
run_benchmark(BenchConfig(device="cpu", dtypes=(dtype,), seq_lens=(16,), heads=2, head_dim=8, impls=tuple(impls),
                          warmup=1, min_reps=1, max_reps=1, min_time_s=0.0))  # warm every code path first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
run_benchmark(BenchConfig(device="cpu", dtypes=(dtype,), seq_lens=(t,), heads=heads, head_dim=d, batch=batch,
                          impls=tuple(impls), threads=1, warmup=1, min_reps=2, max_reps=3, min_time_s=0.0))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


def measure(case: tuple) -> dict:
    """Peak RSS growth of one case in a fresh process, and the estimate for it."""
    impls, batch, heads, t, d, dtype = case
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(case)], capture_output=True, text=True, check=True)
    grown = int(done.stdout.strip().splitlines()[-1])
    estimate = estimated_peak_bytes(batch, heads, t, dtype, tuple(impls), head_dim=d)
    return {
        "impls": list(impls),
        "B": batch,
        "H": heads,
        "T": t,
        "d": d,
        "dtype": dtype,
        "rss_growth_bytes": grown,
        "estimate_bytes": estimate,
        "estimate_holds": estimate >= grown,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = [measure(case) for case in CASES]
    for r in rows:
        print(
            f"{'+'.join(r['impls']):<48} B={r['B']} H={r['H']:<3} T={r['T']:<5} d={r['d']:<4} {r['dtype']:<8} "
            f"grew {format_bytes(r['rss_growth_bytes']):>10}  estimate {format_bytes(r['estimate_bytes']):>10}  "
            f"{'ok' if r['estimate_holds'] else 'UNDER'}"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r["estimate_holds"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
