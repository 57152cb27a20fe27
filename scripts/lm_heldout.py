"""Write the Language model page's held-out texts: the first HELD_OUT_CHARS characters of each corpus's held-out split.

usage: python scripts/lm_heldout.py

The corpora are built from the installed Debian packages exactly as the shipped runs were trained
(`attnlab.lm.corpus`): every HELD_OUT_EVERY-th document is held out, never trained on. The page's StreamingLLM
experiment reads these files (`attnlab/lmlab/heldout/<lang>.txt`); the texts are public domain (Tang poems, the King
James Bible), short excerpts as the corpus module allows.
"""

from __future__ import annotations

from attnlab.lm.corpus import DOC_SEP, build
from attnlab.lmlab.texts import HELD_OUT_CHARS, HELD_OUT_DIR


def main() -> None:
    """One file per language, its documents laid out as training lays them (a blank line between two)."""
    for lang in ("zh", "en"):
        text = DOC_SEP.join(build(lang).held_out)[:HELD_OUT_CHARS]
        (HELD_OUT_DIR / f"{lang}.txt").write_text(text, encoding="utf-8")
        print(f"{lang}: {len(text)} characters")


if __name__ == "__main__":
    main()
