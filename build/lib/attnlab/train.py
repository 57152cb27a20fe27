"""Command line: `python -m attnlab.train NAME --out DIR [--steps N] [--seed S]` trains a recipe."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from attnlab.trained.training import RECIPES, train


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, train on CPU with a fixed thread count, print the last losses."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("name", choices=sorted(RECIPES))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=None)
    a = p.parse_args(argv)
    torch.set_num_threads(1)  # one thread: the same sums in the same order on every machine
    torch.use_deterministic_algorithms(True)
    t0 = time.perf_counter()
    train(a.name, a.out, a.steps, a.seed)
    print(f"{a.name}: trained in {time.perf_counter() - t0:.1f} s -> {a.out}")


if __name__ == "__main__":
    main()
