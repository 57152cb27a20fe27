"""The course (contract 17): its tasks in both languages, graded on the live numbers, and the forms an answer takes."""

from __future__ import annotations

import math

import pytest
import torch

from attnlab import course, links
from attnlab.classroom.answers import AnswerError
from attnlab.course import answers
from attnlab.course.ids import IDS
from attnlab.course.syllabus import LM_TEXTS, SYLLABUS
from attnlab.course.task import KINDS, NUMBER_FORMS, TEXT_FORMS
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.registry import PAGES

TASKS = course.tasks("en")
ZH = course.tasks("zh")


def test_the_course_has_sixteen_tasks_or_more_on_eight_pages_or_more_in_order():
    assert len(TASKS) >= 16 and len({task.page for task in TASKS}) >= 8
    assert [task.id for task in TASKS] == list(IDS) == [entry.id for entry in SYLLABUS] == [t.id for t in ZH]
    pages = [spec.url_path for spec in PAGES]
    assert all(task.page in pages for task in TASKS)
    first = [pages.index(task.page) for task in TASKS]
    assert first.index(pages.index("soft-dictionary")) < first.index(pages.index("kv-cache"))  # a learning order
    wanted = {"soft-dictionary", "scaling", "masking", "playground", "multihead", "rope", "decoder", "lm", "kv-cache"}
    assert wanted <= {task.page for task in TASKS}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_task_has_its_fields_in_both_languages(lang):
    words = catalog(lang)
    for task in course.tasks(lang):
        assert task.kind in KINDS and task.prompt.strip()
        assert len(task.hints) == 3 and all(h.strip() for h in task.hints)
        assert task.rule.form in (*NUMBER_FORMS, *TEXT_FORMS, "choice")
        assert (task.kind == "choice") == bool(task.options) and len(task.options) == len(task.rule.choices)
        assert isinstance(task.link, dict) and all(isinstance(v, str) for v in task.link.values())
        assert f"course.task.{task.id}.why" in words
    assert course.tasks(lang) is not course.tasks(lang)  # a fresh list: a caller cannot change another's


def test_a_task_link_names_only_values_its_page_reads():
    from attnlab.notebook import recipe_of

    for task in TASKS:
        names = {p.name for scope in ("app", *recipe_of(task.page).scopes) for p in links.params(scope)}
        assert set(task.link) <= names and set(task.rule.act) <= names, task.id


def wrong(task, query: dict[str, str]) -> str:
    """An answer that must be graded wrong for this task at this state."""
    found = task.answer(query)
    if task.kind == "choice":
        other = next(c for c in task.rule.choices if c != found.value)
        return "ABCDEFGHIJ"[task.rule.choices.index(other)]
    if task.rule.form == "head":
        return str(next(h for h in range(1, 5) if h not in (found.value, *found.ties)))
    if task.rule.form == "character":
        return "q" if found.value.casefold() != "q" else "z"
    if task.rule.form == "question":
        if found.question.qid == "q_shape":
            return "(99, 99)"
        return next(tok for j, tok in enumerate(found.question.tokens) if j not in found.question.top)
    value = float(found.value)
    return f"{value + max(0.5 * abs(value), 0.5, 10 * task.rule.tol[0]):.6g}"


@pytest.mark.parametrize("task", TASKS, ids=[task.id for task in TASKS])
def test_every_tasks_expected_answer_is_graded_right_and_a_wrong_one_wrong(task):
    expected = task.expected(task.link)
    assert task.grade(task.link, expected), (task.id, expected)
    verdict = task.check(task.link, expected)
    assert verdict.correct and verdict.expected == expected and verdict.why
    bad = wrong(task, task.link)
    assert not task.grade(task.link, bad), (task.id, bad, expected)
    assert task.check(task.link, bad).correct is False
    zh = course.by_id("zh")[task.id]
    assert zh.grade(zh.link, zh.expected(zh.link))


def test_changing_the_link_changes_the_expected_answer_for_most_tasks():
    """The act each prompt asks for moves the answer: they are computed live, not stored."""
    moved = [task.id for task in TASKS if task.expected(task.link) != task.expected({**task.link, **task.rule.act})]
    assert len(moved) >= len(TASKS) - 2, sorted(set(IDS) - set(moved))


def test_a_student_who_changed_the_page_is_graded_on_the_new_numbers():
    task = course.by_id()["playground-causal"]
    before, after = task.link, {**task.link, "causal": "true"}
    assert task.grade(after, "0") and not task.grade(before, "0")  # the causal mask hides `you` from `I`
    assert task.grade(before, task.expected(before)) and not task.grade(after, task.expected(before))
    kv = course.by_id()["kv-per-token"]
    assert kv.grade({}, "131072") and kv.grade({"bytes": "fp8"}, "65536") and not kv.grade({"bytes": "fp8"}, "131072")


def test_numbers_are_read_in_the_forms_a_student_types():
    kv = course.by_id()["kv-per-token"]
    for typed in ("131072", "131,072", "131 kB", "128 KiB", "１３１０７２", "131072 bytes", "131072 字节"):
        assert kv.grade({}, typed), typed
    share = course.by_id()["scaling-unscaled"]
    value = share.answer(share.link).value
    for typed in (f"{value:.2f}", f"{value * 100:.1f}%", f"{value:.2f}".replace(".", ","), f"{value:.2f}".lstrip("0")):
        assert share.grade(share.link, typed), typed
    assert share.check(share.link, f"{value * 100:.1f}%").note.key == "course.read.percent"
    assert share.check(share.link, f"{value:.2f}".replace(".", ",")).note.key == "course.read.decimal_comma"
    value, note = answers.read_number("1,048,576", "count")
    assert value == 1048576 and note.key == "course.read.thousands"
    assert answers.read_head("2.3", 2, 4) == 3 and answers.read_head("head 4", 2, 4) == 4


@pytest.mark.parametrize(
    ("task_id", "typed", "reason"),
    [
        ("kv-per-token", "a lot", "present.error.number_form"),
        ("kv-per-token", "", "present.error.empty"),
        ("kv-per-token", "50%", "course.error.percent_form"),
        ("kv-per-token", "131 parsecs", "course.error.unit_form"),
        ("dict-weighted", "8 kB", "present.error.number_form"),
        ("decoder-head", "5", "course.error.head_form"),
        ("masking-row", "Z", "present.error.choice_unknown"),
        ("playground-top", "zebra", "present.error.token_unknown"),
        ("playground-shape", "six by eight", "present.error.shape_form"),
    ],
)
def test_an_answer_in_the_wrong_form_says_which_form_it_needs(task_id, typed, reason):
    task = course.by_id()[task_id]
    verdict = task.check(task.link, typed)
    assert verdict.correct is None and verdict.why[0][0] == reason
    assert not task.grade(task.link, typed)
    assert reason in catalog("en") and reason in catalog("zh")


def test_a_choice_is_read_by_letter_number_id_or_text():
    task = course.by_id()["masking-row"]
    right = task.answer(task.link).value
    index = task.rule.choices.index(right)
    zh = course.by_id("zh")[task.id].options[index]
    for typed in ("ABCD"[index], "abcd"[index], str(index + 1), right, task.options[index], zh):
        assert task.grade(task.link, typed), typed


def test_a_state_with_no_answer_says_why():
    task = course.by_id()["playground-causal"]
    with pytest.raises(course.Unanswerable) as none:
        task.expected({"text": "hi"})
    assert none.value.key == "course.none.tokens" and none.value.key in catalog("zh")
    with pytest.raises(course.Unanswerable):
        course.by_id()["decoder-head"].expected({"seq": "k 3 x m"})  # the last symbol never came before


def test_the_links_task_and_progress_are_read_and_unknown_ids_replaced():
    values, replaced = links.read(("app",), {"task": "Dict-Weighted", "done": "rope-angle,nope,dict-weighted,nope"})
    assert values["app"]["task"] == "dict-weighted"
    assert values["app"]["done"] == ["dict-weighted", "rope-angle"]  # course order, no repeats
    assert [(r.name, r.reason, r.used) for r in replaced] == [("done", "unknown_done", "dict-weighted,rope-angle")]
    values, replaced = links.read(("app",), {"task": "no-such-task"})
    assert values["app"]["task"] == "" and replaced[0].reason == "unknown_task"
    assert links.read(("app",), {})[0]["app"] | {} == {"lang": "en", "palette": "default", "task": "", "done": []}


def test_the_notebook_of_a_task_link_is_the_pages_notebook():
    """The course's values shape no figure: a task link's notebook runs the same code and says nothing was replaced."""
    import json

    from attnlab.notebook import from_query

    def cells(query: str) -> list[dict]:
        return json.loads(from_query("", query))["cells"]

    plain = cells("text=I+like+you&lang=zh")
    tasked = cells("text=I+like+you&lang=zh&task=playground-causal&done=dict-weighted,rope-angle")
    code = [[c["source"] for c in nb if c["cell_type"] == "code"] for nb in (plain, tasked)]
    assert code[0] == code[1] and len(plain) == len(tasked)


def test_a_number_task_states_its_tolerance_from_limits():
    from attnlab import limits

    tolerances = {v for k, v in vars(limits).items() if k.startswith("TOL_ANSWER_")}
    for task in TASKS:
        assert all(x == 0 or x in tolerances for x in task.rule.tol), task.id
    task = course.by_id()["scaling-variance"]
    measured = task.answer(task.link).value
    assert math.isclose(measured, 64, rel_tol=limits.TOL_ANSWER_ESTIMATE) and task.grade(task.link, "64")


def test_an_answer_error_keeps_what_was_typed():
    with pytest.raises(AnswerError) as bad:
        answers.read_number(" 5O% ", "value")
    assert bad.value.raw == " 5O% "


@pytest.mark.parametrize("task_id", ["lm-next", "lm-probability", "lm-previous"])
def test_the_language_models_tasks_read_the_pages_reading_with_no_pass_of_their_own(task_id, monkeypatch):
    """The panel runs after the page, which has just read the text: grading takes its numbers, not a second pass."""
    from attnlab.course import models
    from attnlab.lmlab.reading import read

    task = course.by_id("en")[task_id]
    query = {"model": "en", "text": LM_TEXTS["en"] + " and"}  # a text no earlier test read
    lm = models.language_model("en", None)
    page = read(lm, query["text"])  # the page's own reading, as /lm makes it
    passes = []
    monkeypatch.setattr(type(lm), "forward", lambda self, *a, **k: passes.append(1) or pytest.fail("a second pass"))
    expected = task.expected(query)
    assert not passes
    if task_id == "lm-probability":
        probs = torch.softmax(page.last_logits.double(), -1)
        assert abs(float(expected) - float(probs.max())) <= 0.005  # the same logits (the answer is given to 2 digits)
