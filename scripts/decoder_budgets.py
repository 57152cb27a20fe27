"""Measure the Trained decoder page's budget: a rerun at 40 symbols, server side (DESIGN: <= 150 ms).

usage: python scripts/decoder_budgets.py [--reruns 20] [--symbols 40] [--out decoder_budgets.json]

In-process with Streamlit's AppTest, like scripts/budgets.py: the page is opened once (warm-up), then
each timed rerun follows a real change. Two cases: a new sequence each time (the model runs afresh, as
when a user types) and one head's ablation toggled (after the first pass the runs come from the cache).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from attnlab.testing import app_test

PAGE = "views/decoder.py"


def sequence(vocab: tuple[str, ...], n: int, seed: int) -> str:
    """n symbols repeating with a period drawn from the seed."""
    from attnlab.ui.pages.decoder.numbers import random_repeating

    period = int(np.random.default_rng(seed).integers(4, 13))
    return " ".join(random_repeating(vocab, period, n, seed))


def summary(times: list[float]) -> dict[str, float]:
    """Median and p90 in milliseconds."""
    times = sorted(times)
    return {"median_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))], "n": len(times)}


def rerun_ms(model: str, n_symbols: int, reruns: int, change: str) -> dict[str, float]:
    """Time `reruns` reruns of the page at n_symbols, each after one change of the kind named."""
    from attnlab.ui.pages.decoder.sections import MODELS, decoder, head_name

    vocab = tuple(decoder(model).vocab)
    at = app_test(120)
    at.run()
    at.query_params.update(model=model, seq=sequence(vocab, n_symbols, 0))
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert MODELS[model]
    times = []
    for i in range(reruns):
        if change == "sequence":
            at.text_input(key="decoder.seq").set_value(sequence(vocab, n_symbols, i + 1))
        else:
            at.multiselect(key="decoder.ablate").set_value([head_name(0, 0)] if i % 2 == 0 else [])
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1000)
        assert not at.exception, [e.value for e in at.exception]
    return summary(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reruns", type=int, default=20)
    ap.add_argument("--symbols", type=int, default=40)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    report = {}
    for model in ("2l", "1l"):
        for change in ("sequence", "ablation"):
            report[f"rerun[{model}, {args.symbols} symbols, new {change}]"] = rerun_ms(
                model, args.symbols, args.reruns, change
            )
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
