"""The Language model page's texts: each language's first text, and the held-out passage the sink experiment reads.

The first texts are held out of training (`attnlab.lm.corpus` keeps every 20th document aside): a regular
five-character poem by Yuan Zhen in Chinese (every character in the shipped vocabulary), so that heads which
look one line back have lines to look at, and Genesis 11:1 in English. The held-out passages are the first
HELD_OUT_CHARS characters of each corpus's held-out split, laid out as training lays documents, written by
`scripts/lm_heldout.py` from the Debian packages.
"""

from __future__ import annotations

import functools
from pathlib import Path

FIRST_TEXT = {
    "zh": "寥落古行宫，宫花寂寞红。白头宫女在，闲坐说玄宗。",
    "en": "And the whole earth was of one language, and of one speech.",
}
HELD_OUT_DIR = Path(__file__).parent / "heldout"
HELD_OUT_CHARS = 640  # at least 512 (the issue's floor) and past twice the shipped runs' 256-character context


def first_text(lang: str) -> str:
    """The text a page opens on for a language ('zh' or anything else: English)."""
    return FIRST_TEXT["zh" if lang == "zh" else "en"]


@functools.lru_cache(maxsize=2)
def held_out(lang: str) -> str:
    """The held-out passage of a language ('zh' or 'en'), as scripts/lm_heldout.py wrote it."""
    return (HELD_OUT_DIR / f"{'zh' if lang == 'zh' else 'en'}.txt").read_text(encoding="utf-8")


def language_of(lm, fallback: str) -> str:
    """The language whose held-out passage the model's vocabulary knows best ('zh' or 'en'; `fallback` on a tie):
    a model folder does not say what it was trained on."""
    unknown = {lang: len(lm.unknown(held_out(lang))) for lang in ("zh", "en")}
    if unknown["zh"] == unknown["en"]:
        return "zh" if fallback == "zh" else "en"
    return min(unknown, key=unknown.get)
