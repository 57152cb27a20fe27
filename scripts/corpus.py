"""Build the language models' corpora from the installed Debian packages and say what each source is.

    python scripts/corpus.py [--out DIR] [--lang zh,en]

For each language: the source packages with their versions and licences (dpkg-query, /usr/share/doc/<pkg>/copyright),
the documents and characters of the training and held-out splits, the distinct characters, and how much of the text
the language model's vocabulary covers. With --out, DIR/<lang>/train.jsonl and held_out.jsonl (one document a line,
as a JSON string) and sources.json are written: for a look at the text; `python -m attnlab.train lm-zh` builds the
same corpus itself. The cleaning and the split are `attnlab.lm.corpus`'s (its docstring says why each step is there
and what the licences allow: nothing of the corpora ships in the repository).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from attnlab.lm.corpus import build, regular_poems
from attnlab.lm.recipes import LM_RECIPES


def describe(lang: str, out: Path | None) -> None:
    """Print one corpus's sources and sizes; write it under out/lang when asked."""
    c = build(lang)
    counts = Counter(c.text())
    cap = LM_RECIPES[f"lm-{lang}"].vocab_cap
    kept = sum(n for _, n in counts.most_common(cap))
    for s in c.sources:
        print(f"{lang}: {s['package']} {s['version']} -- licence: {s['licence']}")
    print(
        f"{lang}: train {len(c.train)} documents, {len(c.text()):,} characters; held out {len(c.held_out)} documents,"
        f" {len(c.text('held')):,} characters; {len(counts)} distinct characters, the vocabulary "
        f"({cap or len(counts)}) covers {kept / sum(counts.values()):.1%}"
    )
    if lang == "zh":
        train, held = len(regular_poems(c.train)), len(regular_poems(c.held_out))
        print(f"{lang}: regular poems (period 6 or 8): {train} train, {held} held out")
    if out is not None:
        folder = out / lang
        folder.mkdir(parents=True, exist_ok=True)
        for name, docs in (("train", c.train), ("held_out", c.held_out)):
            lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
            (folder / f"{name}.jsonl").write_text(lines, encoding="utf-8")
        (folder / "sources.json").write_text(json.dumps(c.sources, indent=1, ensure_ascii=False), encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--lang", default="zh,en")
    a = p.parse_args()
    for lang in a.lang.split(","):
        describe(lang.strip(), a.out)


if __name__ == "__main__":
    main()
