"""What every page family's link module shares: the app-wide values each link carries, and a replaced value's record.

The app-wide values: `lang`, `palette`, and the course's `task` (the open task's id) and `done` (the ids answered
right), which every page keeps when it rewrites its link (contract 17). Pure Python, no import of any page's modules:
every module of `attnlab.links` imports this one and nothing imports it back, so the package's import direction runs
one way (`attnlab.links` -> a family's module -> this); the course's ids are read from `attnlab.course.ids`
only when a link names a task.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.params import Invalid, Param, choice_param, dump_list

LANGS = ("en", "zh")
PALETTE_NAMES = ("default", "cb")  # attnlab.figures.palette.PALETTES' names (a test keeps the two equal)
COURSE_NAMES = ("task", "done")  # the course's app-wide values: left out of a link while empty (ui.app.state.save)
MAX_SHOWN_IDS = 80  # characters of unknown task ids a message quotes


def task_ids() -> tuple[str, ...]:
    """The course's task ids in order (`attnlab.course.ids`, imported only when a link names a task)."""
    from attnlab.course.ids import IDS

    return IDS


def _task(raw: str) -> str:
    """The open task: a known id (any case), or "" for none; an unknown one is no task (and said)."""
    name = str(raw).strip().lower()
    if name and name not in task_ids():
        raise Invalid("unknown_task", "")
    return name


def _done(raw: str) -> list[str]:
    """The tasks answered right, in course order; ids the course does not have are left out (and said)."""
    items = list(dict.fromkeys(s.strip().lower() for s in str(raw).split(",") if s.strip()))
    ids = task_ids()
    good = [i for i in ids if i in items]
    unknown = ", ".join(s for s in items if s not in ids)
    if unknown:
        shown = unknown if len(unknown) <= MAX_SHOWN_IDS else unknown[:MAX_SHOWN_IDS] + "…"
        raise Invalid("unknown_done", good, unknown=shown)
    return good


def course_params() -> tuple[Param, ...]:
    """The course's place in a link (contract 17): the open `task` and the ids answered right, `done`."""
    return Param("task", "", _task), Param("done", [], _done, dump_list)


def app_params() -> tuple[Param, ...]:  # ui.app.state.APP's (kept there: the sidebar never waits for this package)
    """The settings every page shares and every link carries: language, palette, and the course's task and progress."""
    lang, palette = choice_param("lang", "en", LANGS), choice_param("palette", PALETTE_NAMES[0], PALETTE_NAMES)
    return lang, palette, *course_params()


@dataclass(frozen=True)
class Replaced:
    """A link's value that could not be honoured: what it said and what is used instead (outside text kept raw)."""

    name: str
    raw: str
    used: str
    reason: str
