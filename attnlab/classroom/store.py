"""The live class's store, whatever holds it (contract 18): codes, keys, limits and refusals, checked once for both.

`ClassStore` checks every argument and counts the tally; a backend (`store_sqlite`, `store_redis`) only reads and
writes, each check and its write in one transaction, so concurrent answers lose nothing. Choices the contract leaves
open, taken here:

- The key is 192 random bits (`secrets`), and only its SHA-256 is stored; a presented key is hashed and compared with
  `hmac.compare_digest`. The code is drawn independently, from 31 characters without look-alikes (no 0 O 1 I L).
- A new `link` (the teacher changed the sentence or a setting) starts a new round: the questions changed, so the
  answers and reveals of the old link no longer count. Moving between steps keeps each step's answers and reveal.
- `state(code)["answers"]` counts the answers to the current step of the current round. A step that asks the class
  no question (`classlink.has_question`) takes no answer.
- Limits: `MAX_CLASS_STUDENTS` students answer in one class (a new one past it is refused), answers of at most
  `MAX_CLASS_ANSWER_CHARS`, `CLASS_ANSWER_BURST` answers per student per `CLASS_ANSWER_WINDOW_S` (changes included),
  and a class is gone `CLASS_IDLE_S` after its last change (create, advance, reveal or answer).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
import unicodedata
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attnlab.classroom import classlink
from attnlab.limits import (
    CLASS_ANSWER_BURST,
    CLASS_ANSWER_WINDOW_S,
    CLASS_IDLE_S,
    MAX_CLASS_ANSWER_CHARS,
    MAX_CLASS_LINK_CHARS,
    MAX_CLASS_STUDENT_CHARS,
    MAX_CLASS_STUDENTS,
)
from attnlab.stages import N_STEPS

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # digits and capitals without 0, O, 1, I, L
CODE_LENGTH = 6
KEY_BYTES = 24  # 192 bits
CREATE_TRIES = 20  # fresh codes tried before giving up (31^6 codes: a clash is rare)
REASONS = {  # one line naming what is wrong, for logs and callers without a locale (the UI says `live.refused.*`)
    "empty": "an answer cannot be empty",
    "too_long": "an answer may have at most {cap} characters",
    "not_current": "step {step} is not the class's current step ({current})",
    "revealed": "step {step} is revealed: answers are closed",
    "no_question": "step {step} asks the class no question",
    "full": "the class already has {cap} students",
    "rate": "too many answers: at most {burst} per {window} s",
    "bad_step": "a step is a whole number from 1 to {n}",
    "bad_link": "a class link is a query string of at most {cap} characters",
    "bad_student": "a student id is 1 to {cap} characters",
    "unknown": "no class {code}: unknown or expired",
    "wrong_key": "that key does not open class {code}",
    "unreachable": "the class store cannot be reached: {detail}",
    "busy": "no free class code was found",
}


def _line(reason: str, fields: dict[str, Any]) -> str:
    return REASONS[reason].format(**fields)


class Refused(ValueError):
    """An answer or a move the class does not take; `reason` names it (`live.refused.<reason>`), `fields` fill it."""

    def __init__(self, reason: str, **fields: Any) -> None:
        super().__init__(_line(reason, fields))
        self.reason, self.fields = reason, fields


class UnknownClass(KeyError):
    """No class has this code (never created, or expired)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.reason, self.fields = "unknown", {"code": code}

    def __str__(self) -> str:
        return _line(self.reason, self.fields)


class WrongKey(PermissionError):
    """The key presented is not this class's: nothing was changed."""

    def __init__(self, code: str) -> None:
        super().__init__(_line("wrong_key", {"code": code}))
        self.reason, self.fields = "wrong_key", {"code": code}


class StoreUnavailable(ConnectionError):
    """The store cannot be reached (Redis down, a file that cannot be opened): the page says so and goes on."""

    def __init__(self, detail: str) -> None:
        detail = " ".join(str(detail).split())[:200]
        super().__init__(_line("unreachable", {"detail": detail}))
        self.reason, self.fields = "unreachable", {"detail": detail}


def new_code() -> str:
    """Six characters a student types, from an alphabet without look-alikes."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def new_key() -> str:
    """The teacher's secret: KEY_BYTES random bytes, URL-safe text."""
    return secrets.token_urlsafe(KEY_BYTES)


def key_hash(key: str) -> str:
    """What the store keeps of a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def key_matches(stored: str | None, key: object) -> bool:
    """A presented key against the stored hash, in constant time."""
    return isinstance(key, str) and stored is not None and hmac.compare_digest(stored, key_hash(key))


def normalize_code(raw: object) -> str | None:
    """A code as typed (`ab c-2de`, full-width, lower case) in its stored form, or None when it cannot be one."""
    if not isinstance(raw, str) or len(raw) > 4 * CODE_LENGTH:
        return None
    code = "".join(unicodedata.normalize("NFKC", raw).upper().replace("-", "").split())
    return code if len(code) == CODE_LENGTH and all(c in ALPHABET for c in code) else None


@dataclass(frozen=True)
class Row:
    """One class as a backend holds it."""

    key_hash: str
    link: str
    step: int
    round: int
    changed: float


class ClassStore(ABC):
    """Contract 18's API; a backend implements the underscored reads and writes, each atomic."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock

    def create(self, link: str) -> tuple[str, str]:
        """A new class on this presenter link at its step: (code, key)."""
        _check_link(link)
        key, number = new_key(), classlink.read_link(link).step
        for _ in range(CREATE_TRIES):
            code = new_code()
            if self._create(code, Row(key_hash(key), link, number, 0, self.clock())):
                return code, key
        raise Refused("busy")

    def state(self, code: str) -> dict | None:
        """Step, link, whether the step is revealed and how many answered it; None for an unknown or expired class."""
        code = normalize_code(code)
        found = self._state(code, self.clock() - CLASS_IDLE_S) if code else None
        if found is None:
            return None
        row, revealed, answers = found
        return {"step": row.step, "link": row.link, "revealed": revealed, "answers": answers}

    def owns(self, code: str, key: str) -> bool:
        """Whether `key` is this live class's key (a teacher resuming)."""
        row = self._row(code)
        return row is not None and key_matches(row.key_hash, key)

    def advance(self, code: str, key: str, step: int, link: str | None = None) -> None:
        """Move the class to `step`; a new `link` replaces the old (a new round). A wrong key changes nothing."""
        _check_step(step)
        if link is not None:
            _check_link(link)
        row = self._owned(code, key)
        self._advance(row_code(code), row, step, link, self.clock())

    def reveal(self, code: str, key: str) -> None:
        """Reveal the current step: answers to it close, and the tally and verdicts show."""
        row = self._owned(code, key)
        self._reveal(row_code(code), row, self.clock())

    def answer(self, code: str, student: str, step: int, text: str) -> None:
        """Record (or replace) one student's answer to the current step's question."""
        _check_step(step)
        if not isinstance(student, str) or not 0 < len(student) <= MAX_CLASS_STUDENT_CHARS:
            raise Refused("bad_student", cap=MAX_CLASS_STUDENT_CHARS)
        if not isinstance(text, str) or not text.strip():
            raise Refused("empty")
        if len(text) > MAX_CLASS_ANSWER_CHARS:
            raise Refused("too_long", cap=MAX_CLASS_ANSWER_CHARS)
        row = self._row(code)
        if row is None:
            raise UnknownClass(str(code))
        if step != row.step:
            raise Refused("not_current", step=step, current=row.step)
        if not classlink.has_question(row.link, step):
            raise Refused("no_question", step=step)
        self._answer(row_code(code), row, student, step, text, self.clock())

    def tally(self, code: str, step: int) -> dict[str, int]:
        """Each distinct answer to `step` (this round) after the question's own fold, and how many gave it."""
        _check_step(step)
        row = self._row(code)
        if row is None:
            raise UnknownClass(str(code))
        question = classlink.class_question(row.link, step)
        counts = Counter(classlink.fold(question, text)[0] for text in self._answers(row_code(code), row, step))
        return dict(counts.most_common())

    def close(self) -> None:  # noqa: B027 (a backend without connections has nothing to close)
        """Let go of connections."""

    def _row(self, code: str) -> Row | None:
        """The live class under a code as typed, or None."""
        code = normalize_code(code)
        found = self._state(code, self.clock() - CLASS_IDLE_S) if code else None
        return found[0] if found else None

    def _owned(self, code: str, key: str) -> Row:
        """The class, once the key is checked: UnknownClass or WrongKey otherwise."""
        row = self._row(code)
        if row is None:
            raise UnknownClass(str(code))
        if not key_matches(row.key_hash, key):
            raise WrongKey(row_code(code))
        return row

    @abstractmethod
    def _create(self, code: str, row: Row) -> bool:
        """Store a new class; False when the code is taken by a live class."""

    @abstractmethod
    def _state(self, code: str, alive_since: float) -> tuple[Row, bool, int] | None:
        """The class (changed after `alive_since`), whether its step is revealed, and its step's answer count."""

    @abstractmethod
    def _advance(self, code: str, row: Row, step: int, link: str | None, now: float) -> None:
        """Set the step (and a new link, a new round) unless the class expired meanwhile (then UnknownClass)."""

    @abstractmethod
    def _reveal(self, code: str, row: Row, now: float) -> None:
        """Reveal the current step of the current round."""

    @abstractmethod
    def _answer(self, code: str, row: Row, student: str, step: int, text: str, now: float) -> None:
        """Atomically: the class still at `row`'s step and round, the step open, the student within the class's and
        their own limits; then the answer stored. Refused or UnknownClass otherwise."""

    @abstractmethod
    def _answers(self, code: str, row: Row, step: int) -> list[str]:
        """Every answer text to `step` in `row`'s round."""


def row_code(code: str) -> str:
    """A code as stored (already checked to be one)."""
    return normalize_code(code) or ""


def _check_step(step: object) -> None:
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= N_STEPS:
        raise Refused("bad_step", n=N_STEPS)


def _check_link(link: object) -> None:
    if not isinstance(link, str) or len(link) > MAX_CLASS_LINK_CHARS:
        raise Refused("bad_link", cap=MAX_CLASS_LINK_CHARS)
    try:
        classlink.read_link(link)
    except ValueError:
        raise Refused("bad_link", cap=MAX_CLASS_LINK_CHARS) from None


def rate_window(now: float) -> int:
    """The fixed window an answer at `now` counts in."""
    return int(now // CLASS_ANSWER_WINDOW_S)


LIMITS = {"students": MAX_CLASS_STUDENTS, "burst": CLASS_ANSWER_BURST, "window": CLASS_ANSWER_WINDOW_S}
