"""What a live class's link means: the Playground state it carries, the one question of each step, the answers' fold.

A class carries the presenter's query string (contract 18's `link`). Every reader of it, the teacher's screen, each
student's and the store's tally, goes through `read_link`, so all of them compute the same matrices and ask the same
question. The question of a step is the presenter's (`attnlab.classroom.build`) for the head the link shows and the
query row drawn from the state's digest (a teacher's picked token chip stays on the teacher's Playground). A step with
two questions (softmax: which key wins, what each row adds up to) asks the class the one named in `CLASS_QUESTION`.
Runs and questions are cached per link: numbers only, read-only, the same for every session.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from dataclasses import dataclass

from attnlab import links
from attnlab.classroom.answers import AnswerError
from attnlab.classroom.build import QUESTION_STAGES, questions_for_stage
from attnlab.classroom.questions import (
    ArgmaxQuestion,
    MaskQuestion,
    Question,
    RowSumQuestion,
    ShapeQuestion,
    positions_text,
    quoted_tokens,
)
from attnlab.limits import MAX_HEAD_PANELS, MAX_PANEL_CELLS, MAX_TOKENS
from attnlab.params import divisor_at_most
from attnlab.pipeline import LabConfig, LabResult, decode_edits, run_lab
from attnlab.stages import N_STEPS, step
from attnlab.tokens import tokenize

CLASS_QUESTION = {"weights": "row_sum"}  # stage -> the question a class answers where the presenter asks several
LINK_SCOPES = ("lab", "present")  # what a class link holds: the Playground's state, the step and questions on/off
LINK_CACHE = 32  # class links whose runs and questions a server keeps
_POSITIONS = re.compile(r" \(([\d, ]+)\)$")  # the tail of an argmax fold: " (2)" or " (1, 5)"

NO_CELLS = "none"  # how an answer of no masked cell is spelled, sent and counted (each page says it in words)


@dataclass(frozen=True)
class ClassLink:
    """A class link read the way the presenter reads its own: the state, the heads on screen, questions on or off."""

    config: LabConfig
    step: int
    quiz: bool
    head_choice: int  # the link's `head`: 0 or -g for a group of heads, h for head h alone
    shown: tuple[int, ...]  # the heads drawn (0-based); questions ask about the first

    @property
    def head(self) -> int:
        """The head a question asks about (the presenter's: the one shown, or the first of a group)."""
        return self.shown[0]


def shown_heads(choice: int, n_heads: int, t_len: int) -> tuple[int, ...]:
    """The heads a `head` value shows, grouped as the page's picker groups them (past the last: the first group)."""
    size = max(1, min(MAX_HEAD_PANELS, MAX_PANEL_CELLS // max(1, t_len * t_len)))
    groups = [tuple(range(lo, min(lo + size, n_heads))) for lo in range(0, n_heads, size)]
    if 1 <= choice <= n_heads:
        return (choice - 1,)
    return groups[-choice] if -len(groups) < choice <= 0 else groups[0]


@functools.lru_cache(maxsize=LINK_CACHE)
def read_link(link: str) -> ClassLink:
    """The state a class link describes, each bad value replaced as the presenter replaces it (ValueError: no query)."""
    query = links.split_query(link)
    values, _ = links.read(LINK_SCOPES, query)
    v, present = values["lab"], values["present"]
    v["heads"] = divisor_at_most(v["d_model"], v["heads"])
    links.settle_lab(v, query)
    edits, _ = decode_edits(query.get("edits", ""), v["d_model"])
    modern = {name: v[name] for name in ("kv_heads", "rope", "alibi", "mask", "window", "sinks", "prefix")}
    edits_on = tuple(sorted(edits.items()))
    config = LabConfig(
        v["text"], v["d_model"], v["heads"], v["causal"], v["seed"], v["init"], v["pe"], edits_on, **modern
    )
    t_len = len(tokenize(v["text"])[:MAX_TOKENS])
    return ClassLink(config, present["step"], present["quiz"], v["head"], shown_heads(v["head"], v["heads"], t_len))


def link_of(query: dict[str, str]) -> str:
    """The presenter's query as a class link: its state, step and questions (the app's lang and palette stay each
    reader's own)."""
    names = {p.name for scope in LINK_SCOPES for p in links.params(scope)} | {"edits"}
    return urllib.parse.urlencode({k: v for k, v in query.items() if k in names}, quote_via=urllib.parse.quote)


@functools.lru_cache(maxsize=LINK_CACHE)
def class_run(link: str) -> LabResult:
    """The run every screen of the class draws (shared read-only: nothing may change it)."""
    return run_lab(read_link(link).config)


def has_question(link: str, number: int) -> bool:
    """Whether step `number` asks the class a question: a step with one, questions on, a sentence with tokens."""
    if not 1 <= number <= N_STEPS:
        return False
    read = read_link(link)
    return read.quiz and step(number).name in QUESTION_STAGES and bool(tokenize(read.config.text))


@functools.lru_cache(maxsize=LINK_CACHE)
def class_question(link: str, number: int) -> Question | None:
    """The one question step `number` asks the class under this link, or None."""
    if not has_question(link, number):
        return None
    name, read = step(number).name, read_link(link)
    asked = questions_for_stage(name, read.config, class_run(link), head=read.head)
    wanted = CLASS_QUESTION.get(name, asked[0].qid)
    return next(q for q in asked if q.qid == wanted)


def fold(question: Question | None, raw: str) -> tuple[str, AnswerError | None]:
    """An answer as the tally counts it: the question's own parse written one way (`0.5` and ` .50` alike), or, when
    the question cannot read it (or there is none), the text trimmed and case-folded, with the reason it was not read.
    """
    if question is None:
        return raw.strip().casefold(), None
    try:
        grade = question.grade(raw)
    except AnswerError as bad:
        return raw.strip().casefold(), bad
    return spelled(question, grade.given), None


def spelled(question: Question, given: object) -> str:
    """A parsed answer in one spelling: shapes `5 × 8`, keys `cat (2)`, cells `(1,2) (1,3)` or `none`, numbers `0.5`."""
    if isinstance(question, ArgmaxQuestion):  # a frozenset of key positions
        positions = sorted(given)  # type: ignore[call-overload]
        return f"{quoted_tokens(list(question.tokens), positions)} ({positions_text(positions)})"
    if isinstance(question, ShapeQuestion):  # a tuple of dimensions
        return " × ".join(map(str, given))  # type: ignore[call-overload]
    if isinstance(question, RowSumQuestion):  # a tuple of numbers
        return ", ".join(f"{g:g}" for g in given)  # type: ignore[attr-defined]
    if isinstance(question, MaskQuestion) and isinstance(given, frozenset):  # cells (a count stays a number)
        return " ".join(f"({i + 1},{j + 1})" for i, j in sorted(given)) or NO_CELLS
    return str(given)  # a mask count, a choice's id


def right(question: Question | None, key: str) -> bool:
    """Whether a folded answer is right: read back through the question (argmax folds name their positions)."""
    if question is None:
        return False
    if isinstance(question, ArgmaxQuestion):
        found = _POSITIONS.search(key)
        positions = [int(p) - 1 for p in found.group(1).split(", ")] if found else []
        if not positions or not all(0 <= p < len(question.tokens) for p in positions):
            return False
        return key == spelled(question, frozenset(positions)) and bool(set(positions) & set(question.top))
    try:
        return question.grade(key).correct
    except AnswerError:
        return False


def right_answer(question: Question) -> str:
    """A text the question grades right: its grade then explains the answer to whoever gave none (or a wrong one)."""
    if isinstance(question, ArgmaxQuestion):
        j = question.top[0]
        candidates = [question.tokens[j], str(j + 1), f"#{j + 1}"]  # the token, unless another reads the same
    elif isinstance(question, RowSumQuestion):
        candidates = ["1", ", ".join(f"{s:g}" for s in question.sums)]
    elif isinstance(question, ShapeQuestion):
        candidates = [" × ".join(map(str, question.shape))]
    elif isinstance(question, MaskQuestion):
        blocked = question.expected
        candidates = [str(len(blocked)) if question.form == "count" else spelled(question, blocked)]
    else:
        candidates = [str(question.expected)]
    for text in candidates:
        try:
            if question.grade(text).correct:
                return text
        except AnswerError:
            continue
    raise ValueError(f"no right answer found for {question.uid}")  # a bug: every question has one
