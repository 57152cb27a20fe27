"""The course's words in one language, read from the UI's own catalog files (`attnlab/locales/<lang>/course.toml`).

The core reads them without Streamlit, so `attnlab.course.tasks(lang)` gives prompts and hints in either language
to a page, a test or a notebook alike.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

LOCALES = Path(__file__).resolve().parents[1] / "locales"
LANGS = ("en", "zh")


@functools.lru_cache(maxsize=4)  # keyed by the asked language; each falls back to one of two tables
def course_words(lang: str) -> dict:
    """The course's table in `lang` (English for anything else): `task.<id>.prompt`, `hint1`..`hint3`, options."""
    lang = lang if lang in LANGS else "en"
    return tomllib.loads((LOCALES / lang / "course.toml").read_text(encoding="utf-8"))


def task_words(lang: str, task_id: str) -> dict[str, str]:
    """One task's prompt, hints and option texts in `lang`."""
    return course_words(lang)["task"][task_id]
