"""Lessons built on the seed tutorials: the pure math behind each lesson page (torch + numpy only).

One module per lesson; views/lesson_*.py draw what these functions compute, so every number a
lesson shows (8 for the soft dictionary, the sinusoid values, the fitted slopes) comes from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.lessons.parse import float_in, parse_vector


@dataclass(frozen=True)
class Lesson:
    """One step of the course: its locale file stem, page file and URL path."""

    slug: str
    page: str
    url_path: str
    icon: str


COURSE: tuple[Lesson, ...] = (
    Lesson("dictionary", "views/lesson_dictionary.py", "soft-dictionary", ":material/menu_book:"),
    Lesson("scaling", "views/lesson_scaling.py", "scaling", ":material/square_foot:"),
    Lesson("positions", "views/lesson_positions.py", "positions", ":material/format_list_numbered:"),
    Lesson("masking", "views/lesson_masking.py", "masking", ":material/visibility_off:"),
    Lesson("cost", "views/lesson_cost.py", "cost", ":material/speed:"),
)

__all__ = ["COURSE", "Lesson", "float_in", "parse_vector"]
