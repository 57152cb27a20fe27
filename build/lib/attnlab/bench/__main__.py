"""CLI: `python -m attnlab.bench --device auto --dtype float16,float32 --seq-lens 256,512 ... --out r.json`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attnlab.bench.config import IMPLS, BenchConfig
from attnlab.bench.env import resolve_device
from attnlab.bench.memory import DTYPES, format_bytes
from attnlab.bench.peaks import peak_share
from attnlab.bench.row import ResultRow
from attnlab.bench.sweep import run_benchmark


def _csv(kind: type, choices: tuple[str, ...] | None = None):
    """An argparse type for comma-separated lists, checked against choices when given."""

    def parse(text: str) -> tuple:
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a comma-separated list")
        try:
            values = tuple(kind(s) for s in items)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        bad = [v for v in values if choices is not None and v not in choices]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {bad}; choose from {','.join(choices)}")
        if kind is int and any(v < 1 for v in values):
            raise argparse.ArgumentTypeError("sequence lengths must be positive")
        return values

    return parse


def _positive(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The flags of DESIGN contract 3, plus a few knobs for repetitions."""
    p = argparse.ArgumentParser(prog="python -m attnlab.bench", description=__doc__)
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--dtype", type=_csv(str, tuple(DTYPES)), default=("float32",), help="comma list")
    p.add_argument("--seq-lens", type=_csv(int), default=(256, 512, 1024), help="comma list, e.g. 256,512")
    p.add_argument("--heads", type=_positive, default=8)
    p.add_argument("--head-dim", type=_positive, default=64)
    p.add_argument("--batch", type=_positive, default=1)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--impls", type=_csv(str, IMPLS), default=IMPLS, help=f"comma list of {','.join(IMPLS)}")
    p.add_argument("--out", type=Path, help="JSON file to write (stdout when omitted)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--min-reps", type=_positive, default=5)
    p.add_argument("--max-reps", type=_positive, default=200)
    p.add_argument("--min-time", type=float, default=0.3, help="seconds of timed calls per row, at least")
    p.add_argument("--max-time", type=float, default=5.0, help="stop repeating a row after this")
    p.add_argument("--tiled-block", type=_positive, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=_positive, help="torch.set_num_threads for the CPU (default: torch's choice)")
    p.add_argument("--no-check", action="store_true", help="skip the float64 reference (max_abs_err None)")
    p.add_argument("--no-progress", action="store_true")
    return p


def _fmt(x: float | None, spec: str) -> str:
    """Format a number or show '-' for None."""
    return "-" if x is None else format(x, spec)


def summary(doc: dict) -> str:
    """A plain-text table of the results for the terminal."""
    env = doc["env"]
    lines = [f"{env['device_name']} · torch {env['torch']} · cuda {env['cuda']} · {env['date']}"]
    head = f"{'impl':<15}{'dtype':<9}{'T':>7}{'median ms':>11}{'p20':>10}{'p80':>10}"
    lines.append(head + f"{'TFLOP/s':>9}{'of peak':>8}{'peak mem':>11}{'max err':>10}  status")
    for r in map(ResultRow.from_dict, doc["results"]):
        share = peak_share(r.dtype, r.tflops, env)
        mem = None if r.peak_mem_bytes is None else format_bytes(r.peak_mem_bytes)
        lines.append(
            f"{r.impl:<15}{r.dtype:<9}{r.seq_len:>7}{_fmt(r.median_ms, '.3f'):>11}"
            f"{_fmt(r.p20_ms, '.3f'):>10}{_fmt(r.p80_ms, '.3f'):>10}{_fmt(r.tflops, '.3f'):>9}"
            f"{_fmt(share, '.1%'):>8}{mem or '-':>11}{_fmt(r.max_abs_err, '.1e'):>10}  {r.status}"
        )
    return "\n".join(lines)


def print_progress(done: int, total: int, row: ResultRow) -> None:
    """One line per finished row on stderr (no progress-bar package: the CLI needs only torch and numpy)."""
    print(f"[{done}/{total}] {row.impl} {row.dtype} T={row.seq_len} {row.status[:40]}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Parse flags, run the sweep printing progress, write the JSON, print a summary to stderr."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        resolve_device(args.device)
        config = BenchConfig(
            device=args.device,
            dtypes=args.dtype,
            seq_lens=args.seq_lens,
            heads=args.heads,
            head_dim=args.head_dim,
            batch=args.batch,
            causal=args.causal,
            impls=args.impls,
            warmup=args.warmup,
            min_reps=args.min_reps,
            max_reps=max(args.max_reps, args.min_reps),
            min_time_s=args.min_time,
            max_time_s=args.max_time,
            seed=args.seed,
            tiled_block=args.tiled_block,
            check=not args.no_check,
            threads=args.threads,
        )
    except (RuntimeError, ValueError) as exc:
        parser.error(str(exc))

    doc = run_benchmark(config, on_progress=None if args.no_progress else print_progress)
    text = json.dumps(doc, indent=1)
    if args.out is None:
        print(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(summary(doc), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
