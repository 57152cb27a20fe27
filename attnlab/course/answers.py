"""Read a course answer in the form its task takes, on top of the presenter's readers (`attnlab.classroom.answers`).

The presenter's readers fold full-width digits and CJK punctuation and refuse what they cannot read with a message
key (`AnswerError`). The course adds the forms a student alone types for a number read off a page, and says how it
read each (a `Note`) instead of refusing it: a decimal comma ("0,5" is 0.5: one comma followed by other than three
digits, or after a lone 0), thousands separators ("131,072"), a percentage for a share ("50%" is 0.5) and, for a
byte count, a unit ("131 kB", "128 KiB", "17.2 GB", decimal or binary). A head is named by its number, or as
layer.head ("2.3") in the layer the task asks about. A character is compared as the page shows it (a space as ␣).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from attnlab.classroom.answers import AnswerError, checked, normalize, parse_choice, parse_number

ERROR = "course.error."
THOUSANDS = re.compile(r"[-+]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")
DECIMAL_COMMA = re.compile(r"[-+]?\d*,\d+")
PERCENT = re.compile(r"(.+?)\s*%")
WITH_UNIT = re.compile(r"(.+?)\s*([a-z字节]+)")
UNITS = {"b": 1, "byte": 1, "bytes": 1, "字节": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
SPACE_WORDS = frozenset({"␣", "space", "a space", "blank", "空格", "空白"})


class CourseAnswerError(AnswerError):
    """An answer the course cannot read in its task's form: `reason` is a `course.error.*` key."""

    def __init__(self, reason: str, raw: str, **fields: object) -> None:
        super().__init__(reason, raw, **fields)
        self.reason = ERROR + reason


@dataclass(frozen=True)
class Note:
    """How a loosely written answer was read: a `course.read.*` key and its fields (the typed text kept raw)."""

    key: str
    fields: dict[str, str] = field(default_factory=dict)


def plain_number(text: str, raw: str) -> tuple[float, Note | None]:
    """One number, with thousands separators or a decimal comma read (and said); AnswerError otherwise."""
    if THOUSANDS.fullmatch(text) and not text.lstrip("+-").startswith("0"):
        value = parse_number(text.replace(",", ""))
        return value, Note("course.read.thousands", {"typed": raw.strip(), "value": f"{value:g}"})
    if DECIMAL_COMMA.fullmatch(text):
        value = parse_number(text.replace(",", "."))
        return value, Note("course.read.decimal_comma", {"typed": raw.strip(), "value": f"{value:g}"})
    return parse_number(text), None


def read_number(raw: str, form: str) -> tuple[float, Note | None]:
    """A number in a task's form: "share" also takes a percentage, "bytes" a unit; any form a decimal comma."""
    text = checked(raw).lower()
    percent = PERCENT.fullmatch(text)
    if percent and form == "share":
        value, _ = plain_number(percent[1].strip(), raw)
        return value / 100, Note("course.read.percent", {"typed": raw.strip(), "value": f"{value / 100:g}"})
    if percent:
        raise CourseAnswerError("percent_form", raw)
    unit = WITH_UNIT.fullmatch(text)
    if unit and form == "bytes":
        value, _ = plain_number(unit[1].strip(), raw)  # not a number before the letters: the number form's message
        if unit[2] not in UNITS:
            raise CourseAnswerError("unit_form", raw)
        scaled = value * UNITS[unit[2]]
        return scaled, Note("course.read.bytes", {"typed": raw.strip(), "value": f"{scaled:,.0f}"})
    return plain_number(text, raw)


def read_head(raw: str, layer: int, heads: int) -> int:
    """A head of layer `layer` (from 1) named by its number ("3", "head 3") or as layer.head ("2.3")."""
    numbers = [int(n) for n in re.findall(r"\d+", checked(raw))]
    if len(numbers) == 2 and numbers[0] == layer:
        numbers = numbers[1:]
    if len(numbers) != 1 or not 1 <= numbers[0] <= heads:
        raise CourseAnswerError("head_form", raw, layer=layer, heads=heads)
    return numbers[0]


def read_choice(raw: str, ids: Sequence[str], *texts: Sequence[str]) -> str:
    """One option: its id, its letter, its number from 1 (`parse_choice`), or its text in any of the languages given."""
    text = checked(raw).casefold()
    for shown in texts:
        for letter, option, words in zip("abcdefghij", ids, shown, strict=False):
            if text in (normalize(words).casefold(), f"{letter}. {normalize(words).casefold()}"):
                return option
    return parse_choice(raw, list(ids))


def read_character(raw: str) -> str:
    """One typed character or token as the page shows it (a space as ␣), case and outer space aside."""
    text = checked(raw).strip("\"'`“”‘’「」")
    if text.casefold() in SPACE_WORDS:
        return " "
    return text.casefold()
