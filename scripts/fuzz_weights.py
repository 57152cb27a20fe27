"""A long fuzz run of load_weights, outside the default tests: inputs tried, accepted, refused by reason, escapes.

Two engines, both checking the test suite's contract (tests/unit/test_weights_fuzz.py `outcome`: a
valid MultiHeadWeights, or a WeightsError with a sentence in both languages):

    python scripts/fuzz_weights.py --examples 20000
        hypothesis: the structure-aware strategies of the fuzz tests (JSON, .npz, safetensors, mutated
        valid files, raw bytes under any name), each run for this many examples.

    pip install atheris==3.0.0
    python scripts/fuzz_weights.py --atheris --runs 200000
        atheris (libFuzzer): coverage-guided byte mutations of attnlab.weights_io, zipfile and json,
        seeded with files drawn from the same strategies. The first byte of an input picks the name.

Any escape is saved under --out (one file per exception type) so it can be replayed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ATHERIS_NAMES = ("w.json", "w.npz", "w.safetensors", "W.NPZ", "w.pt", "w")


class Tally:
    """Counts of outcomes, and the first input that escaped with each exception type, saved to disk."""

    def __init__(self, out: Path) -> None:
        self.counts: Counter[str] = Counter()
        self.out = out
        self.started = time.process_time()

    def run(self, name: str, data: bytes) -> None:
        """Load one input, counting what came out; an escape never stops the run."""
        from tests.unit.test_weights_fuzz import outcome

        try:
            result = outcome(name, data)
        except AssertionError as err:
            result = f"ESCAPE contract: {str(err)[:60]}"
        except Exception as err:  # noqa: BLE001 - counting every escape is the point of this script
            result = f"ESCAPE {type(err).__name__}"
        if result.startswith("ESCAPE") and result not in self.counts:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / f"{result.split()[1].strip(':')}-{len(self.counts)}-{name.replace('/', '_')}").write_bytes(data)
        self.counts[result] += 1

    def escapes(self) -> int:
        """How many inputs got something other than a MultiHeadWeights or a WeightsError with sentences."""
        return sum(n for key, n in self.counts.items() if key.startswith("ESCAPE"))

    def report(self, title: str) -> None:
        """Print the totals: inputs, accepted, each refusal reason, escapes."""
        total = sum(self.counts.values())
        escapes = self.escapes()
        refused = total - escapes - self.counts["accepted"]
        print(f"\n== {title}: {total} inputs in {time.process_time() - self.started:.0f} s CPU")
        print(f"accepted {self.counts['accepted']}, refused {refused}, escapes {escapes}")
        for key, n in sorted(self.counts.items(), key=lambda kv: -kv[1]):
            if key != "accepted":
                print(f"  {n:8d}  {key}")
        sys.stdout.flush()


def strategies() -> dict[str, object]:
    """The fuzz tests' strategies, each as (name, bytes) pairs."""
    from hypothesis import strategies as st

    from tests.unit import test_weights_fuzz as fuzz

    return {
        "json": st.tuples(st.sampled_from(["w.json", "W.JSON"]), fuzz.json_files()),
        "npz": st.tuples(st.just("w.npz"), fuzz.npz_files()),
        "safetensors": st.tuples(st.just("w.safetensors"), fuzz.safetensors_files()),
        "mutated valid files": fuzz.mutated_files(),
        "any bytes, any name": st.tuples(fuzz.FILE_NAMES, st.binary(max_size=512)),
    }


def fuzz_test(strategy: object, examples: int, tally: Tally, keep: list[tuple[str, bytes]] | None) -> Callable:
    """A hypothesis test drawing `examples` files from `strategy` (no shrinking, no database) into `tally`."""
    from hypothesis import HealthCheck, Phase, given, settings

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def one(file: tuple[str, bytes]) -> None:
        tally.run(*file)
        if keep is not None:
            keep.append(file)

    return one


def run_hypothesis(examples: int, total: Tally, keep: list[tuple[str, bytes]] | None = None) -> None:
    """Each strategy for `examples` inputs, reported one by one and added to `total`; `keep` collects seeds."""
    for label, strategy in strategies().items():
        tally = Tally(total.out)
        fuzz_test(strategy, examples, tally, keep)()
        tally.report(f"hypothesis, {label}")
        total.counts.update(tally.counts)


def run_atheris(runs: int, seeds: int, tally: Tally) -> None:
    """libFuzzer over the loader, seeded with `seeds` inputs per strategy; prints the tally when `runs` are done."""
    import atheris

    atheris.instrument_all()  # what is loaded so far: the standard library's zipfile among it
    with atheris.instrument_imports(include=["attnlab.weights_io", "json"]):
        from attnlab import weights_io  # noqa: F401 - imported here so that it is instrumented

    corpus: list[tuple[str, bytes]] = []
    run_hypothesis(seeds, Tally(tally.out), keep=corpus)
    corpus_dir = tally.out / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for i, (name, data) in enumerate(corpus):
        prefix = ATHERIS_NAMES.index(name) if name in ATHERIS_NAMES else len(ATHERIS_NAMES) - 1
        (corpus_dir / f"seed-{i}").write_bytes(bytes([prefix]) + data)
    tally.started = time.process_time()

    def one_input(raw: bytes) -> None:
        if not raw:
            return
        tally.run(ATHERIS_NAMES[raw[0] % len(ATHERIS_NAMES)], raw[1:])
        done = sum(tally.counts.values())
        if done % max(runs // 10, 1) == 0 or done >= runs:
            tally.report("atheris" if done >= runs else "atheris (so far)")
        if done >= runs:
            os._exit(1 if tally.escapes() else 0)  # libFuzzer exits from C, past Python's atexit: report first

    atheris.Setup([sys.argv[0], "-max_len=65536", "-rss_limit_mb=4096", str(corpus_dir)], one_input)
    atheris.Fuzz()


def main() -> None:
    """Parse the arguments and run one engine."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000, help="hypothesis examples per strategy")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided instead (pip install atheris==3.0.0)")
    parser.add_argument("--runs", type=int, default=200000, help="atheris inputs")
    parser.add_argument("--seeds", type=int, default=200, help="atheris seeds drawn per strategy")
    parser.add_argument("--out", type=Path, default=Path("/tmp/attnlab-fuzz"), help="escapes and the atheris corpus")
    args = parser.parse_args()
    tally = Tally(args.out)
    if args.atheris:
        run_atheris(args.runs, args.seeds, tally)
    else:
        run_hypothesis(args.examples, tally)
        tally.report("hypothesis, all strategies")
        sys.exit(1 if tally.escapes() else 0)


if __name__ == "__main__":
    main()
