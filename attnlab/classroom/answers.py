"""Read what a student typed: shapes, numbers, tokens, masked cells and choices, in any reasonable form.

Students type on Chinese and English keyboards alike: full-width digits and letters (５, ｄ),
Chinese punctuation (，、；：（）【】。), × or x or * between dimensions, brackets or none. Every form
is brought to one ASCII spelling first; what still cannot be read raises `AnswerError`, whose
`reason` is the locale key of a message that says which form is expected, and which keeps the
raw text so the page can leave it in the box.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from attnlab.limits import MAX_ANSWER_CHARS, MAX_ANSWER_SHAPE_DIMS

ERROR = "present.error."

# What NFKC leaves alone: CJK punctuation and the signs people put between dimensions.
_PUNCT = str.maketrans(
    {
        "、": ",",
        "。": " ",
        "【": "[",
        "】": "]",
        "〔": "(",
        "〕": ")",
        "「": '"',
        "」": '"',
        "『": '"',
        "』": '"',
        "《": "<",
        "》": ">",
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        "×": "x",
        "✕": "x",
        "·": "x",
        "−": "-",
        "–": "-",
        "—": "-",
        "≈": " ",
        "~": " ",
    }
)
_BRACKETS = re.compile(r"[()\[\]{}<>]")
_SEPARATORS = re.compile(r"[\s,;:]+")
_SHAPE_SEPARATORS = re.compile(r"[\s,;:x*]+")
_CELL_SEPARATORS = re.compile(r"[\s,;:\-/>]+")
_QUOTES = "\"'`"
NONE_WORDS = frozenset(
    {"none", "no", "nothing", "no cells", "nil", "null", "empty", "n/a", "-", "∅"}
    | {"无", "没有", "都没有", "一个也没有", "没", "空", "不遮", "都不"}
)


class AnswerError(ValueError):
    """An answer that cannot be read: `reason` is a locale key, `raw` what was typed, `fields` fill the message."""

    def __init__(self, reason: str, raw: str, **fields: Any) -> None:
        super().__init__(reason)
        self.reason, self.raw, self.fields = ERROR + reason, raw, fields


def normalize(raw: str) -> str:
    """One ASCII-ish spelling: full-width forms folded (NFKC), CJK punctuation mapped, outer space trimmed."""
    return unicodedata.normalize("NFKC", raw).translate(_PUNCT).strip()


def checked(raw: str) -> str:
    """The normalized text; empty or absurdly long answers are refused before any parsing (the course's readers too)."""
    if len(raw) > MAX_ANSWER_CHARS:
        raise AnswerError("too_long", raw, cap=MAX_ANSWER_CHARS)
    text = normalize(raw)
    if not text:
        raise AnswerError("empty", raw)
    return text


def _parts(text: str, separators: re.Pattern) -> list[str]:
    """The pieces between separators once brackets are gone: '(5, 8)' -> ['5', '8']."""
    return [p for p in separators.split(_BRACKETS.sub(" ", text)) if p]


def parse_shape(raw: str) -> tuple[int, ...]:
    """A shape such as '(5, 8)', '5x8', '５×８', '（5，8）' or '5 8' -> (5, 8): positive whole numbers, rows first."""
    parts = _parts(checked(raw).lower(), _SHAPE_SEPARATORS)
    if not parts or len(parts) > MAX_ANSWER_SHAPE_DIMS or not all(p.isascii() and p.isdigit() for p in parts):
        raise AnswerError("shape_form", raw)
    dims = tuple(int(p) for p in parts)
    if 0 in dims:
        raise AnswerError("shape_form", raw)
    return dims


def _number(part: str, raw: str) -> float:
    """One finite number from an already normalized piece; AnswerError naming the number form otherwise."""
    try:
        value = float(part)
    except ValueError:
        raise AnswerError("number_form", raw) from None
    if not math.isfinite(value):
        raise AnswerError("number_form", raw)
    return value


def parse_number(raw: str) -> float:
    """One number: '1', '1.0', '１', '0.999', '≈ 1', '-0.5', '1e-3' -> float."""
    parts = _parts(checked(raw), _SEPARATORS)
    if len(parts) != 1:
        raise AnswerError("number_form", raw)
    return _number(parts[0], raw)


def parse_numbers(raw: str) -> list[float]:
    """One or more numbers separated by spaces, commas, 、 or ；: '1, 1, 1' -> [1.0, 1.0, 1.0] (no decimal commas)."""
    return [_number(part, raw) for part in _parts(checked(raw), _SEPARATORS)]


@dataclass(frozen=True)
class TokenPick:
    """The key positions (0-based) an answer names, and whether it named them by text or by position."""

    positions: frozenset[int]
    by_position: bool


def _fold(text: str) -> str:
    """Text compared loosely: full-width folded and case ignored."""
    return unicodedata.normalize("NFKC", text).casefold()


def parse_token(raw: str, tokens: Sequence[str]) -> TokenPick:
    """A key named by its text (exactly as in the sentence, then ignoring case and width) or its position from 1.

    Text wins over position, so in '1 2 3' the answer '3' is the token '3'. A text that occurs
    several times names all its positions; a loose match that fits two different tokens
    ('The' and 'the') is refused and asks for the exact spelling.
    """
    checked(raw)
    typed = raw.strip().strip(_QUOTES + "“”‘’「」『』").strip()
    exact = frozenset(i for i, tok in enumerate(tokens) if tok == typed)
    if exact:
        return TokenPick(exact, False)
    plain = normalize(typed).strip(_QUOTES).lstrip("#")
    if plain.isascii() and plain.isdigit():
        position = int(plain)
        if not 1 <= position <= len(tokens):
            raise AnswerError("position_range", raw, t=len(tokens))
        return TokenPick(frozenset({position - 1}), True)
    loose = [i for i, tok in enumerate(tokens) if _fold(tok) == _fold(plain)]
    if len({tokens[i] for i in loose}) > 1:
        raise AnswerError("token_ambiguous", raw, options=" / ".join(sorted({tokens[i] for i in loose})))
    if not loose:
        raise AnswerError("token_unknown", raw, t=len(tokens))
    return TokenPick(frozenset(loose), False)


@dataclass(frozen=True)
class MaskAnswer:
    """What a student says the mask blocks: a set of (query, key) cells (0-based), or only how many."""

    cells: frozenset[tuple[int, int]] | None
    count: int


def parse_mask_cells(raw: str, t: int, *, count_ok: bool) -> MaskAnswer:
    """'none' / '无' / '0', a count (when `count_ok`), or 1-based (row, column) pairs: '(1,2) (1,3)', '1-2；1-3'."""
    text = checked(raw).lower().strip(".!")
    if text in NONE_WORDS or text == "0":
        return MaskAnswer(frozenset(), 0)
    parts = _parts(text, _CELL_SEPARATORS)
    if not parts or not all(p.isascii() and p.isdigit() for p in parts):
        raise AnswerError("cells_form" if not count_ok else "count_form", raw, t=t)
    numbers = [int(p) for p in parts]
    if len(numbers) == 1:
        if count_ok:
            return MaskAnswer(None, numbers[0])
        raise AnswerError("cells_need_pairs", raw, t=t)
    if len(numbers) % 2:
        raise AnswerError("cells_odd", raw, t=t)
    if not all(1 <= n <= t for n in numbers):
        raise AnswerError("cells_range", raw, t=t)
    cells = frozenset((numbers[i] - 1, numbers[i + 1] - 1) for i in range(0, len(numbers), 2))
    return MaskAnswer(cells, len(cells))


def parse_choice(raw: str, options: Sequence[str]) -> str:
    """One of `options`: its id ('peaked'), its letter ('b', 'Ｂ') or its number from 1 ('2')."""
    text = checked(raw).lower().strip(_QUOTES + ".()")
    if text in options:
        return text
    letters = "abcdefghij"[: len(options)]
    if len(text) == 1 and text in letters:
        return options[letters.index(text)]
    if text.isascii() and text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    raise AnswerError("choice_unknown", raw, letters="/".join(letters.upper()))
