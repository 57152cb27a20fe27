"""A long fuzz run of attnfile.load, outside the default tests: inputs tried, accepted, refused by reason, escapes.

It draws from the fuzz tests' strategies (tests/unit/test_attnfile_fuzz.py: crafted headers, mutated
valid files, random headers, random bytes under any name) and checks the same contract (`outcome`: a
valid AttentionFile, or an AttentionFileError with a sentence in both languages that is not the
catch-all `unreadable`). Any escape is saved under --out, one file per kind, so it can be replayed.

    python -m scripts.fuzz_attnfile --examples 20000
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
from collections import Counter
from pathlib import Path


def strategies() -> dict[str, object]:
    """The fuzz tests' strategies, each as (name, bytes) pairs."""
    from hypothesis import strategies as st

    from tests.unit import test_attnfile_fuzz as fuzz

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


def run(label: str, strategy: object, examples: int, out: Path) -> Counter[str]:
    """`examples` inputs from one strategy (no shrinking, no database), counted by outcome; escapes saved."""
    from hypothesis import HealthCheck, Phase, given, settings

    from tests.unit.test_attnfile_fuzz import outcome

    counts: Counter[str] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def one(file: tuple[str, bytes]) -> None:
        name, data = file
        try:
            result = outcome(name, data)
        except AssertionError as err:
            result = f"ESCAPE contract: {str(err)[:60]}"
        except Exception as err:  # noqa: BLE001 - counting every escape is the point of this script
            result = f"ESCAPE {type(err).__name__}"
        if result.startswith("ESCAPE") and result not in counts:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{label.replace(' ', '_')}-{len(counts)}.bin").write_bytes(data)
        counts[result] += 1

    started = time.process_time()
    one()
    report(f"{label}: {sum(counts.values())} inputs in {time.process_time() - started:.0f} s CPU", counts)
    return counts


def report(title: str, counts: Counter[str]) -> None:
    """Totals: accepted, refused, escapes, then each outcome."""
    escapes = sum(n for key, n in counts.items() if key.startswith("ESCAPE"))
    refused = sum(counts.values()) - escapes - counts["accepted"]
    print(f"\n== {title}\naccepted {counts['accepted']}, refused {refused}, escapes {escapes}")
    for key, n in counts.most_common():
        print(f"  {n:8d}  {key}")
    sys.stdout.flush()


def main() -> None:
    """Each strategy for --examples inputs, then the total; exit 1 if anything escaped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000, help="examples per strategy")
    parser.add_argument("--out", type=Path, default=Path("/tmp/attnlab-fuzz-attnfile"), help="escaped inputs")
    args = parser.parse_args()
    total: Counter[str] = Counter()
    for label, strategy in strategies().items():
        total.update(run(label, strategy, args.examples, args.out))
    report(f"all strategies: {sum(total.values())} inputs", total)
    sys.exit(1 if any(key.startswith("ESCAPE") for key in total) else 0)


if __name__ == "__main__":
    main()
