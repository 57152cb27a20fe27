"""A course task: what it asks and where, and how it grades an answer on the page's numbers now (contract 17).

Nothing is stored: `Task.expected(query)` reads the query as the task's page reads its link (`attnlab.notebook`'s
`values_of`: the page's Params and its later fall-backs) and asks the core for the number the page draws. A task
built on a presenter question (`attnlab.classroom.questions`) grades with that question's own reader and verdict;
the others read the answer in their form (`attnlab.course.answers`) and compare within the tolerance they state.
"""

from __future__ import annotations

import functools
import math
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnlab.classroom.answers import AnswerError
from attnlab.course.answers import Note, read_character, read_choice, read_head, read_number

KINDS = ("number", "choice", "text")
NUMBER_FORMS = ("value", "share", "bytes", "count", "head")  # how a number is read and written (`answers`)
TEXT_FORMS = ("character", "question")  # a character or token compared as text; a presenter question's own reader
NOT_STATE = ("task", "done", "palette")  # link values that shape no number a task reads
OWN_FALLBACKS = ("decoder",)  # its late fall-back (the nearest checkpoint) is the answer's own; the notebook's loads
MAX_GIVEN = 40  # characters of a typed answer a verdict quotes
ANSWERS_KEPT = 512  # (task, page state) answers a server keeps: a few numbers each


class Unanswerable(ValueError):
    """The page's state holds no answer to the task (a sentence too short, an empty text): a `course.none.*` key."""

    def __init__(self, reason: str, **fields: object) -> None:
        super().__init__(reason)
        self.key, self.fields = f"course.none.{reason}", {k: str(v) for k, v in fields.items()}


@dataclass(frozen=True)
class Answer:
    """What the task's page shows now: the value, the numbers its sentence explains it with, the values tied with it."""

    value: Any  # a float (number tasks), a text (a character, a shape), or a choice's id
    fields: dict[str, str] = field(default_factory=dict)  # fill course.task.<id>.why; outside text kept raw
    ties: tuple = ()  # other values that are right too (heads within half a printed step of the best)
    question: Any = None  # a presenter question that grades the answer itself (kind "text", form "question")
    why: str = "why"  # the sentence that explains it: course.task.<id>.<why> (one per case where cases differ)


@dataclass(frozen=True)
class Rule:
    """How one task's answer is computed and read; its page's values in, its `Answer` out."""

    answer: Callable[[dict[str, Any]], Answer]
    form: str  # one of NUMBER_FORMS, TEXT_FORMS, or "choice"
    tol: tuple[float, float] = (0.0, 0.0)  # (absolute, relative) for a number
    act: dict[str, str] = field(default_factory=dict)  # the change the prompt asks for, as link values
    choices: tuple[str, ...] = ()  # a choice task's option ids (its texts are the Task's `options`)
    head_of: tuple[int, int] = (0, 0)  # a head task's (layer from 1, heads in it)


@dataclass(frozen=True)
class Verdict:
    """One answer graded: right or not (None: it could not be read), why as locale keys and fields, the answer now."""

    correct: bool | None
    why: tuple[tuple[str, dict[str, str]], ...]  # sentences in order; fields hold outside text raw (escape to show)
    expected: str
    note: Note | None = None  # how a loosely written answer was read


def page_values(page: str, query: dict[str, str]) -> dict[str, Any]:
    """The task page's values for a query, as the page reads its link (its Params, then its later fall-backs)."""
    from attnlab.links import read
    from attnlab.notebook import recipe_of, values_of

    recipe = recipe_of(page)
    if page in OWN_FALLBACKS:
        scoped, _ = read(("app", *recipe.scopes), query)
        return {name: value for scope in scoped.values() for name, value in scope.items()}
    return values_of(recipe, urllib.parse.urlencode(query))[0]


@functools.lru_cache(maxsize=ANSWERS_KEPT)
def cached_answer(task: Task, state: tuple[tuple[str, str], ...]) -> Answer:
    """A task's answer for one page state, computed once per server process (numbers and tokens only)."""
    return task.rule.answer(page_values(task.page, dict(state)))


def written(value: Any, form: str) -> str:
    """A number as the course writes an expected answer: exact for counts and bytes, else enough digits to grade."""
    if form in ("count", "head") or (form == "bytes" and float(value).is_integer()):
        return str(round(value))
    text = f"{value:.4g}" if form == "value" else f"{value:.3g}"
    return f"{value:.0f}" if "e+" in text else text  # 47120, not 4.712e+04


@dataclass(frozen=True, eq=False)
class Task:
    """One task of the course (contract 17's fields), in one language; `rule` says how it is graded."""

    id: str
    page: str  # the registry's url_path
    link: dict[str, str]  # the query that opens the page where the task starts
    prompt: str
    kind: str  # "number", "choice" or "text"
    options: tuple[str, ...]  # a choice task's option texts, in order (A, B, ...)
    hints: tuple[str, str, str]  # a nudge, where to look, how to read the answer (the panel adds the answer itself)
    rule: Rule = field(repr=False, compare=False)

    def __hash__(self) -> int:
        return hash(self.id)

    def answer(self, query: dict[str, str]) -> Answer:
        """What the page shows now for the state `query` describes (raises Unanswerable when it shows none)."""
        state = tuple(sorted((k, str(v)) for k, v in query.items() if k not in NOT_STATE))
        return cached_answer(self, state)

    def expected(self, query: dict[str, str]) -> str:
        """The answer for the page state `query` describes, computed now by the page's own functions."""
        value = self.answer(query).value
        if self.kind == "number":
            return written(value, self.rule.form)
        if self.kind == "choice":
            return self.options[self.rule.choices.index(value)]
        return str(value)

    def grade(self, query: dict[str, str], answer: str) -> bool:
        """True when `answer` is right for the page state `query` describes; False when wrong or unreadable."""
        return bool(self.check(query, answer).correct)

    def check(self, query: dict[str, str], answer: str) -> Verdict:
        """The verdict on `answer` with why and the numbers; unreadable answers get the form they need."""
        found = self.answer(query)
        expected = self.expected(query)
        try:
            return self._judge(found, answer, expected)
        except AnswerError as bad:
            return Verdict(None, ((bad.reason, {k: str(v) for k, v in bad.fields.items()}),), expected)

    def _judge(self, found: Answer, raw: str, expected: str) -> Verdict:
        why = (f"course.task.{self.id}.{found.why}", found.fields)
        if found.question is not None:
            grade = found.question.grade(raw)
            return Verdict(grade.correct, ((grade.why, grade.fields), why), expected)
        form, note = self.rule.form, None
        if form == "choice":
            picked = read_choice(raw, self.rule.choices, *self.option_texts())
            given, right = self.options[self.rule.choices.index(picked)], picked == found.value
        elif form == "character":
            given = raw.strip()
            right = read_character(raw) in {read_character(str(v)) for v in (found.value, *found.ties)}
        elif form == "head":
            number = read_head(raw, *self.rule.head_of)
            given, right = str(number), number in (found.value, *found.ties)
        else:
            number, note = read_number(raw, form)
            given, right = raw.strip(), any(self.close(number, v) for v in (found.value, *found.ties))
        head = (f"course.verdict.{'right' if right else 'wrong'}", {"value": expected, "given": given[:MAX_GIVEN]})
        return Verdict(right, (head, why), expected, note)

    def option_texts(self) -> list[tuple[str, ...]]:
        """The options in every language (this task's first): a student may switch language mid-task."""
        from attnlab.course.words import LANGS, task_words

        others = [tuple(task_words(lang, self.id)[f"option_{c}"] for c in self.rule.choices) for lang in LANGS]
        return [self.options, *others]

    def close(self, given: float, value: float) -> bool:
        """Within the task's tolerance: |given - value| <= absolute + relative * |value| (and float noise)."""
        absolute, relative = self.rule.tol
        return math.isclose(given, value, rel_tol=max(relative, 1e-9), abs_tol=absolute)
