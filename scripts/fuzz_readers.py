"""A long fuzz run of the upload readers, outside the default tests: inputs tried, accepted, refused by reason, escapes.

Two readers, each checked against its fuzz tests' contract (`outcome` in the test file):

    weights   attnlab.weights_io.load_weights (tests/unit/test_weights_fuzz.py): a valid MultiHeadWeights,
              or a WeightsError with a sentence in both languages.
    attnfile  attnlab.attnfile.load (tests/unit/test_attnfile_fuzz.py): a valid AttentionFile, or an
              AttentionFileError with a sentence in both languages that is not the catch-all `unreadable`.
    results   attnlab.bench.results.load_results (tests/unit/test_results_fuzz.py): a RecordedRun the
              Benchmark page can draw, or a ResultsError with a sentence in both languages (not `unreadable`).

    python -m scripts.fuzz_readers --examples 20000 [--target weights|attnfile|results|all]
        hypothesis: the structure-aware strategies of the fuzz tests (for weights: JSON, .npz, safetensors,
        mutated valid files, raw bytes under any name; for attention files: crafted headers, mutated valid
        files, random headers, raw bytes under any name), each run for this many examples.

    pip install atheris==3.0.0
    python -m scripts.fuzz_readers --atheris --runs 200000 --target weights|attnfile|results
        atheris (libFuzzer): coverage-guided byte mutations of one reader, attnlab.untrusted, zipfile and
        json, seeded with files drawn from the same strategies. The first byte of an input picks the name.

Any escape is saved under --out/<target>/ (one file per exception type) so it can be replayed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import struct
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Target:
    """One reader: its fuzz test module (strategies and `outcome`), the names atheris picks, what it instruments."""

    test_module: str
    atheris_names: tuple[str, ...]
    instrument: tuple[str, ...]


TARGETS = {
    "weights": Target(
        "tests.unit.test_weights_fuzz",
        ("w.json", "w.npz", "w.safetensors", "W.NPZ", "w.pt", "w"),
        ("attnlab.weights_io", "attnlab.untrusted", "json"),
    ),
    "attnfile": Target(
        "tests.unit.test_attnfile_fuzz",
        ("a.safetensors", "A.SAFETENSORS", "a.pt", "a"),
        ("attnlab.attnfile", "attnlab.untrusted", "json"),
    ),
    "results": Target(
        "tests.unit.test_results_fuzz",
        ("r.json", "R.JSON", "r.pt", "r"),
        ("attnlab.bench.results", "attnlab.untrusted", "json"),
    ),
}


def fuzz_module(target: str) -> object:
    """The target's fuzz test module (imported late: hypothesis and the reader load only when needed)."""
    return importlib.import_module(TARGETS[target].test_module)


class Tally:
    """Counts of outcomes, and the first input that escaped with each exception type, saved to disk."""

    def __init__(self, target: str, out: Path) -> None:
        self.counts: Counter[str] = Counter()
        self.target, self.out = target, out / target
        self.started = time.process_time()

    def run(self, name: str, data: bytes) -> None:
        """Load one input, counting what came out; an escape never stops the run."""
        outcome = fuzz_module(self.target).outcome  # imported on first use: after atheris has instrumented the reader
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
        """How many inputs got something other than an accepted file or a refusal with its sentences."""
        return sum(n for key, n in self.counts.items() if key.startswith("ESCAPE"))

    def report(self, title: str) -> None:
        """Print the totals: inputs, accepted, each refusal reason, escapes."""
        total = sum(self.counts.values())
        escapes = self.escapes()
        refused = total - escapes - self.counts["accepted"]
        print(f"\n== {self.target}, {title}: {total} inputs in {time.process_time() - self.started:.0f} s CPU")
        print(f"accepted {self.counts['accepted']}, refused {refused}, escapes {escapes}")
        for key, n in sorted(self.counts.items(), key=lambda kv: -kv[1]):
            if key != "accepted":
                print(f"  {n:8d}  {key}")
        sys.stdout.flush()


def strategies(target: str) -> dict[str, object]:
    """The target's fuzz-test strategies, each drawing (name, bytes) pairs."""
    from hypothesis import strategies as st

    fuzz = fuzz_module(target)
    if target == "results":
        return dict(fuzz.STRATEGIES)
    if target == "weights":
        return {
            "json": st.tuples(st.sampled_from(["w.json", "W.JSON"]), fuzz.json_files()),
            "npz": st.tuples(st.just("w.npz"), fuzz.npz_files()),
            "safetensors": st.tuples(st.just("w.safetensors"), fuzz.safetensors_files()),
            "mutated valid files": fuzz.mutated_files(),
            "any bytes, any name": st.tuples(fuzz.FILE_NAMES, st.binary(max_size=512)),
        }
    headers = st.binary(max_size=200) | fuzz.JSON_ANY.map(lambda v: fuzz.json.dumps(v).encode())
    return {
        "crafted headers": st.tuples(st.just("a.safetensors"), fuzz.header_file()),
        "mutated valid files": st.tuples(st.just("m.safetensors"), fuzz.mutated_file()),
        "random headers": st.tuples(
            st.just("r.safetensors"),
            st.tuples(headers, st.binary(max_size=64)).map(lambda hb: struct.pack("<Q", len(hb[0])) + hb[0] + hb[1]),
        ),
        "any bytes, any name": st.tuples(fuzz.NAMES, st.binary(max_size=512)),
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


def run_hypothesis(target: str, examples: int, total: Tally, keep: list[tuple[str, bytes]] | None = None) -> None:
    """Each of the target's strategies for `examples` inputs, reported one by one and added to `total`."""
    for label, strategy in strategies(target).items():
        tally = Tally(target, total.out.parent)
        fuzz_test(strategy, examples, tally, keep)()
        tally.report(f"hypothesis, {label}")
        total.counts.update(tally.counts)


def run_atheris(target: str, runs: int, seeds: int, tally: Tally) -> None:
    """libFuzzer over one reader, seeded with `seeds` inputs per strategy; prints the tally when `runs` are done."""
    import atheris

    names = TARGETS[target].atheris_names
    atheris.instrument_all()  # what is loaded so far: the standard library's zipfile among it
    with atheris.instrument_imports(include=list(TARGETS[target].instrument)):
        importlib.import_module(TARGETS[target].instrument[0])  # imported here so that it is instrumented

    corpus: list[tuple[str, bytes]] = []
    run_hypothesis(target, seeds, Tally(target, tally.out.parent), keep=corpus)
    corpus_dir = tally.out / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for i, (name, data) in enumerate(corpus):
        prefix = names.index(name) if name in names else len(names) - 1
        (corpus_dir / f"seed-{i}").write_bytes(bytes([prefix]) + data)
    tally.started = time.process_time()

    def one_input(raw: bytes) -> None:
        if not raw:
            return
        tally.run(names[raw[0] % len(names)], raw[1:])
        done = sum(tally.counts.values())
        if done % max(runs // 10, 1) == 0 or done >= runs:
            tally.report("atheris" if done >= runs else "atheris (so far)")
        if done >= runs:
            os._exit(1 if tally.escapes() else 0)  # libFuzzer exits from C, past Python's atexit: report first

    atheris.Setup([sys.argv[0], "-max_len=65536", "-rss_limit_mb=4096", str(corpus_dir)], one_input)
    atheris.Fuzz()


def main() -> None:
    """Parse the arguments and run one engine over the chosen readers; exit 1 if anything escaped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=[*TARGETS, "all"], default="all", help="which reader (default: all)")
    parser.add_argument("--examples", type=int, default=20000, help="hypothesis examples per strategy")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided instead (pip install atheris==3.0.0)")
    parser.add_argument("--runs", type=int, default=200000, help="atheris inputs")
    parser.add_argument("--seeds", type=int, default=200, help="atheris seeds drawn per strategy")
    parser.add_argument("--out", type=Path, default=Path("/tmp/attnlab-fuzz"), help="escapes and the atheris corpus")
    args = parser.parse_args()
    targets = list(TARGETS) if args.target == "all" else [args.target]
    if args.atheris:
        if len(targets) != 1:
            parser.error("--atheris fuzzes one reader: pass --target weights, attnfile or results")
        run_atheris(targets[0], args.runs, args.seeds, Tally(targets[0], args.out))
        return
    escapes = 0
    for target in targets:
        tally = Tally(target, args.out)
        run_hypothesis(target, args.examples, tally)
        tally.report("hypothesis, all strategies")
        escapes += tally.escapes()
    sys.exit(1 if escapes else 0)


if __name__ == "__main__":
    main()
