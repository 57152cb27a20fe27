"""CLI: `python -m attnlab.bench --device auto --dtype float16,float32 --seq-lens 256,512 ... --out r.json`.

`--preset record [--dry-run] --out FILE` runs the headline sweep instead (attnlab.bench.record, contract 11).
`--kv-heads N` and `--mask causal|window:W|documents:N` give the rows of contract 15 (grouped-query heads, the
masks of long-context models); `flex` is FlexAttention, compiled where the machine can (`--flex-eager`: never).
Bad input (a flag, a device that is not there, a dtype the device cannot run, a mask that means nothing) gets
one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attnlab.bench.config import IMPLS, BenchConfig
from attnlab.bench.env import resolve_device
from attnlab.bench.errors import one_line
from attnlab.bench.maskrule import parse_mask
from attnlab.bench.memory import DTYPES, format_bytes
from attnlab.bench.peaks import peak_share
from attnlab.bench.plan import Plan
from attnlab.bench.record import DRY_RUN, RECORD, dtype_problems, run_record
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


def _mask(text: str) -> str:
    """argparse type: a mask rule, kept as its spec ('window:256'); one line naming what is wrong otherwise."""
    try:
        return parse_mask(text).spec
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class Parser(argparse.ArgumentParser):
    """argparse with its errors in one line (no usage block): what went wrong, and where the flags are listed."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {one_line(message, 300)} (--help lists the flags)\n")


def build_parser() -> argparse.ArgumentParser:
    """The flags of DESIGN contracts 3 and 15, plus a few knobs for repetitions."""
    p = Parser(prog="python -m attnlab.bench", description=__doc__)
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--dtype", type=_csv(str, tuple(DTYPES)), default=("float32",), help="comma list")
    p.add_argument("--seq-lens", type=_csv(int), default=(256, 512, 1024), help="comma list, e.g. 256,512")
    p.add_argument("--heads", type=_positive, default=8)
    p.add_argument("--head-dim", type=_positive, default=64)
    p.add_argument("--batch", type=_positive, default=1)
    p.add_argument("--causal", action="store_true", help="the same as --mask causal")
    p.add_argument("--kv-heads", type=_positive, help="key/value heads, a divisor of --heads (default: --heads)")
    p.add_argument("--mask", type=_mask, help="full (default), causal, window:W or documents:N (N equal documents)")
    p.add_argument("--flex-eager", action="store_true", help="run flex eager even where torch.compile could build it")
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
    p.add_argument("--preset", choices=tuple(PRESETS), help="record: the headline sweep, planned for this device")
    p.add_argument("--dry-run", action="store_true", help="with --preset: the same code at tiny sizes (CPU by default)")
    p.add_argument("--budget-s", type=float, help="with --preset: seconds of estimated sweep the plan may use")
    return p


PRESETS = {"record": RECORD}
PRESET_FIXES = ("dtype", "seq_lens", "heads", "head_dim", "batch", "causal", "impls", "warmup", "min_reps")
PRESET_FIXES += ("max_reps", "min_time", "max_time", "tiled_block", "no_check", "kv_heads", "mask", "flex_eager")


def _fmt(x: float | None, spec: str) -> str:
    """Format a number or show '-' for None."""
    return "-" if x is None else format(x, spec)


def summary(doc: dict) -> str:
    """A plain-text table of the results for the terminal."""
    env = doc["env"]
    lines = [f"{env['device_name']} · torch {env['torch']} · cuda {env['cuda']} · {env['date']}"]
    head = f"{'impl':<15}{'dtype':<9}{'d':>4}{'H/kv':>7}{'mask':>13}{'T':>7}{'median ms':>11}{'p20':>10}{'p80':>10}"
    lines.append(head + f"{'TFLOP/s':>9}{'of peak':>8}{'peak mem':>11}{'max err':>10}  status")
    for r in map(ResultRow.from_dict, doc["results"]):
        share = peak_share(r.dtype, r.tflops, env)
        mem = None if r.peak_mem_bytes is None else format_bytes(r.peak_mem_bytes)
        status = r.status + (f" ({r.mode})" if r.mode else "")
        lines.append(
            f"{r.impl:<15}{r.dtype:<9}{r.head_dim:>4}{f'{r.heads}/{r.kv_heads}':>7}{r.mask:>13}{r.seq_len:>7}"
            f"{_fmt(r.median_ms, '.3f'):>11}"
            f"{_fmt(r.p20_ms, '.3f'):>10}{_fmt(r.p80_ms, '.3f'):>10}{_fmt(r.tflops, '.3f'):>9}"
            f"{_fmt(share, '.1%'):>8}{mem or '-':>11}{_fmt(r.max_abs_err, '.1e'):>10}  {status}"
        )
    return "\n".join(lines)


def print_progress(done: int, total: int, row: ResultRow) -> None:
    """One line per finished row on stderr (no progress-bar package: the CLI needs only torch and numpy)."""
    group = f" kv={row.kv_heads}" if row.kv_heads != row.heads else ""
    mask = f" {row.mask}" if row.mask != "full" else ""
    where = f"{row.impl} {row.dtype} d={row.head_dim}{group}{mask} T={row.seq_len}"
    mode = f" ({row.mode[:80]})" if row.mode else ""
    status = row.status[:160]  # an unsupported row's reason is one sentence now: said whole
    print(f"[{done}/{total}] {where} {status}{mode}", file=sys.stderr, flush=True)


def print_plan(plan: Plan) -> None:
    """The plan in one line before the sweep starts."""
    print(f"record plan for {plan.spec.name}: {plan.summary()}", file=sys.stderr, flush=True)


def write(doc: dict, out: Path | None) -> int:
    """The document as JSON to `out` (stdout when None) and the summary to stderr; 1 with one line if it cannot."""
    text = json.dumps(doc, indent=1)
    if out is None:
        print(text)
    else:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"python -m attnlab.bench: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    print(summary(doc), file=sys.stderr)
    return 0


def main_preset(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """--preset: refuse the flags it fixes, plan for the device, run, write."""
    if args.preset is None:
        parser.error("--dry-run and --budget-s go with --preset record")
    fixed = [f"--{name.replace('_', '-')}" for name in PRESET_FIXES if getattr(args, name) != parser.get_default(name)]
    if fixed:
        parser.error(f"--preset {args.preset} fixes the sweep; leave out {', '.join(fixed)}")
    if args.budget_s is not None and not args.budget_s > 0:
        parser.error(f"--budget-s must be a positive number of seconds, got {args.budget_s}")
    try:
        device = resolve_device("cpu" if args.dry_run and args.device == "auto" else args.device)
    except RuntimeError as exc:
        parser.error(str(exc))
    grid = DRY_RUN if args.dry_run else PRESETS[args.preset]
    one_thread = args.dry_run and device.type == "cpu"  # tiny sizes gain nothing from threads on a shared machine
    doc = run_record(
        grid,
        device,
        dry_run=args.dry_run,
        budget_s=args.budget_s,
        threads=args.threads or (1 if one_thread else None),
        seed=args.seed,
        on_plan=None if args.no_progress else print_plan,
        on_progress=None if args.no_progress else print_progress,
    )
    return write(doc, args.out)


def main(argv: list[str] | None = None) -> int:
    """Parse flags, run the sweep printing progress, write the JSON, print a summary to stderr."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.preset is not None or args.dry_run or args.budget_s is not None:
        return main_preset(parser, args)
    try:
        problems = dtype_problems(resolve_device(args.device), args.dtype)
        if problems:
            raise ValueError(next(iter(problems.values())))
        config = BenchConfig(
            device=args.device,
            dtypes=args.dtype,
            seq_lens=args.seq_lens,
            heads=args.heads,
            head_dim=args.head_dim,
            batch=args.batch,
            causal=args.causal,
            kv_heads=args.kv_heads,
            mask=args.mask,
            flex_compile=not args.flex_eager,
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
    return write(doc, args.out)


if __name__ == "__main__":
    sys.exit(main())
