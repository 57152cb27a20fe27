"""Measure contract 12's budgets: a generation step with the cache (<= 5 ms) and the whole head map of the
2-layer decoder at 40 symbols (<= 300 ms), server side, in-process.

usage: python scripts/patching_budgets.py [--repeats 30] [--symbols 40] [--threads 1] [--page]

The head map is what the page computes for it: the default corruption (first period redrawn) and
`patch_heads` (the clean and corrupt runs, then one batched pass with a row per head). The step is one
token fed on top of a filled cache (attnlab.trained.generation.step_times), beside a full forward pass on the
same prefix for comparison. With --page, also the Trained decoder page's rerun (AppTest, in-process) showing
the head map after a new sequence, so the map is computed afresh each time. Medians and p90 in milliseconds;
the machine's load is printed, since a shared CPU slows every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

from attnlab.trained import load, patch_heads
from attnlab.trained.generation import step_cost, step_times
from attnlab.trained.patching import redraw_first_period
from attnlab.ui.pages.decoder.numbers import random_repeating


def summary(seconds: list[float]) -> dict[str, float]:
    """Median and p90 in milliseconds."""
    ms = sorted(s * 1e3 for s in seconds)
    return {"median_ms": round(statistics.median(ms), 3), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3)}


def head_map_times(n_symbols: int, repeats: int) -> list[float]:
    """Seconds per head map of the 2-layer decoder on a period-7 sequence of n_symbols."""
    dec = load("induction-2l")
    clean = random_repeating(dec.vocab, 7, n_symbols, 0)
    patch_heads(dec, clean, redraw_first_period(dec, clean))  # warm-up
    out = []
    for seed in range(repeats):
        start = time.perf_counter()
        patch_heads(dec, clean, redraw_first_period(dec, clean, seed))
        out.append(time.perf_counter() - start)
    return out


def page_rerun_times(n_symbols: int, repeats: int) -> list[float]:
    """Seconds per rerun of /decoder?inside=heads after a new sequence of n_symbols (the map recomputed)."""
    from attnlab.testing import app_test

    dec = load("induction-2l")
    at = app_test(120)
    at.run()
    at.query_params.update(model="2l", inside="heads", seq=" ".join(random_repeating(dec.vocab, 7, n_symbols, 0)))
    at.switch_page("views/decoder.py").run()
    out = []
    for seed in range(1, repeats + 1):
        period = 4 + seed % 9
        at.text_input(key="decoder.seq").set_value(" ".join(random_repeating(dec.vocab, period, n_symbols, seed)))
        start = time.perf_counter()
        at.run()
        out.append(time.perf_counter() - start)
        assert not at.exception and len(at.get("plotly_chart")) == 10, "the page drew the maps and both runs"
    return out


def main() -> None:
    """Print both budgets as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--symbols", type=int, default=40)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--page", action="store_true", help="also time the page's rerun that shows the head map")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    report = {"torch_threads": torch.get_num_threads(), "load_average": os.getloadavg()[0]}
    report["head_map_2l"] = {**summary(head_map_times(args.symbols, args.repeats)), "budget_ms": 300}
    if args.page:
        report["page_rerun_head_map_2l"] = summary(page_rerun_times(args.symbols, args.repeats))
    for name in ("induction-2l", "induction-1l"):
        dec = load(name)
        prefix = random_repeating(dec.vocab, 7, args.symbols, 0)
        cached, full = zip(*(step_times(dec, prefix, 1) for _ in range(args.repeats)), strict=True)
        cost = step_cost(dec, args.symbols + 1)
        report[f"step_{name}"] = {
            "with_cache": {**summary(list(cached)), "budget_ms": 5, "multiply_adds": cost.with_cache},
            "without_cache": {**summary(list(full)), "multiply_adds": cost.without_cache},
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
