"""Command line: `python -m attnlab.train NAME --out DIR [--steps N] [--seed S]` trains a recipe.

NAME is a decoder recipe (`induction-2l`, `induction-1l`: contract 8, one thread, bit for bit the same each time)
or a language model (`lm-zh`, `lm-en`: contract 16, on the corpus `attnlab.lm.corpus` builds from the installed
Debian packages, two threads by default). With no other flag each reproduces the run shipped in the package.
`--set FIELD=VALUE` (language models only) changes one recipe field for a trial run; `--threads` the threads.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import torch

from attnlab.trained.training import RECIPES, train

LM_NAMES = ("lm-zh", "lm-en")


def lm_recipe(name: str, steps: int | None, seed: int | None, changes: list[str]):
    """The language model's recipe with the command line's changes (VALUE read as the field's type)."""
    from attnlab.lm.recipes import LM_RECIPES

    r = LM_RECIPES[name]
    fields = {f.name: f for f in dataclasses.fields(r)}
    update: dict = {"steps": steps} if steps else {}
    if seed is not None:
        update["seed"] = seed
    for change in changes:
        key, _, value = change.partition("=")
        if key not in fields or key == "lang":
            raise SystemExit(f"--set: no recipe field {key!r}; fields: {', '.join(sorted(fields))}")
        kind = int if getattr(r, key) is None else type(getattr(r, key))
        if kind is tuple:
            update[key] = tuple(type(getattr(r, key)[0])(float(v)) for v in value.split(","))
        else:
            update[key] = kind(float(value))
    return dataclasses.replace(r, **update)


def train_lm(a: argparse.Namespace) -> None:
    """Build the corpus from the packages, train, print the metrics' headline figures."""
    from attnlab.lm.corpus import build
    from attnlab.lm.training import train_lm as run

    r = lm_recipe(a.name, a.steps, a.seed, a.set)
    torch.set_num_threads(a.threads or 2)
    m = run(r, build(r.lang), a.out)
    print(
        f"{a.name}: held-out {m['held_out_loss']:.3f} nats/char (bigram {m['bigram_loss']:.3f}, unigram "
        f"{m['unigram_loss']:.3f}); copy random {m['copy_loss_first']:.2f} -> {m['copy_loss_second']:.2f}, "
        f"passage {m['copy_passage_first']:.2f} -> {m['copy_passage_second']:.2f}; {m['train_seconds']:.0f} s"
    )


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments and train; decoders on one thread with deterministic algorithms."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("name", choices=sorted(RECIPES) + list(LM_NAMES))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="language models: a trial")
    p.add_argument("--threads", type=int, default=None, help="language models: torch threads (default 2)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    if a.name in LM_NAMES:
        train_lm(a)
        return
    torch.set_num_threads(1)  # one thread: the same sums in the same order on every machine
    torch.use_deterministic_algorithms(True)
    train(a.name, a.out, a.steps, a.seed)
    print(f"{a.name}: trained in {time.perf_counter() - t0:.1f} s -> {a.out}")


if __name__ == "__main__":
    main()
