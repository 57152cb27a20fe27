"""The course (contract 17): tasks on the real pages, graded on the numbers the page computes for the link now.

`tasks(lang)` gives every task in learning order, in English or Chinese. A `Task` has `id`, `page` (a registry
URL path), `link` (the query that opens that page where the task starts), `prompt`, `kind` (`"number"`,
`"choice"` or `"text"`), `options` (a choice task's texts) and `hints` (three, from a nudge to how to read the
answer). `Task.expected(query)` is the answer for the page state `query` describes (the task's link with whatever
the student changed), computed by the page's own core functions; `Task.grade(query, answer)` says whether an answer
is right (numbers within the tolerance the task states, text without regard to case and space, choices by option),
and `Task.check` says why, with the numbers. Choices the contract leaves open: `options` are the texts shown (the
letters A, B, ... and the texts themselves are read too); a number may be typed with a decimal comma, thousands
separators, a percentage (a share) or a unit (a byte count), and is read as such with a note that says how.
"""

from __future__ import annotations

import functools

from attnlab.course.syllabus import IDS, SYLLABUS, link_of
from attnlab.course.task import Answer, Task, Unanswerable, Verdict
from attnlab.course.words import task_words

__all__ = ["IDS", "Answer", "Task", "Unanswerable", "Verdict", "tasks", "by_id"]


def tasks(lang: str = "en") -> list[Task]:
    """Every task of the course, in learning order, with its words in `lang` ("zh", else English)."""
    return list(_tasks("zh" if lang == "zh" else "en"))


@functools.lru_cache(maxsize=2)  # one entry per language
def _tasks(lang: str) -> tuple[Task, ...]:
    """The tasks in one language, built once (frozen: shared by every session in that language)."""
    out = []
    for entry in SYLLABUS:
        words = task_words(lang, entry.id)
        options = tuple(words[f"option_{c}"] for c in entry.rule.choices)
        hints = (words["hint1"], words["hint2"], words["hint3"])
        link = link_of(entry, lang)
        out.append(Task(entry.id, entry.page, link, words["prompt"], entry.kind, options, hints, entry.rule))
    return tuple(out)


def by_id(lang: str = "en") -> dict[str, Task]:
    """The tasks of `tasks(lang)` by id."""
    return {task.id: task for task in tasks(lang)}
