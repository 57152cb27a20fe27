"""The course through AppTest (contract 17): every task on its page in both languages, the panel, /course, bad input.

Each language walks the whole course as a student does: a page opened once with its first task's link, then each
next task by its link within the same session (Next), the expected answer typed and graded right by the panel.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attnlab import course
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.registry import PAGES
from tests.app.conftest import assert_clean, open_page, texts

ANSWER = "course_answer"
BY_URL = {spec.url_path: spec.path for spec in PAGES}


def follow(at: AppTest, task, lang: str, done: str = "") -> AppTest:
    """Open a task by its link within the session, as its Next link or the Course page does."""
    for name in list(at.query_params):
        del at.query_params[name]
    at.query_params.update({**task.link, "task": task.id, "lang": lang, **({"done": done} if done else {})})
    return at.run()


def panel_prompt(at: AppTest) -> list[str]:
    """The bold prompts on screen (the panel writes its task's prompt in bold)."""
    return [m.value for m in at.markdown if m.value.startswith("**")]


def answer(at: AppTest, typed: str) -> AppTest:
    """Type an answer in the panel's box."""
    return at.text_input(key=ANSWER).input(typed).run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_task_opens_on_its_page_and_its_answer_is_graded_right_there(lang):
    words = catalog(lang)
    at, page, done = None, None, []
    for task in course.tasks(lang):
        if task.page != page:
            at, page = (
                open_page(BY_URL[task.page], lang=lang, task=task.id, done=",".join(done), **task.link),
                task.page,
            )
        else:
            follow(at, task, lang, ",".join(done))
        assert_clean(at)
        assert f"**{task.prompt}**" in panel_prompt(at), task.id
        assert at.text_input(key=ANSWER).value == "", task.id  # a new task starts with an empty box
        expected = task.expected(dict(at.query_params))  # graded on the page's own link, as the panel reads it
        before = len(texts(at, "success"))  # the page's own (a check against PyTorch)
        answer(at, expected)
        assert_clean(at)
        said = texts(at, "success")
        assert len(said) == before + 1, (task.id, expected, texts(at, "warning"))
        if task.rule.form != "question":  # a presenter question says it in the presenter's words
            assert any(s.startswith(words["course.verdict.right"].split("{")[0]) for s in said), task.id
        done.append(task.id)
        assert at.query_params["done"] == ",".join(done) and at.query_params["task"] == task.id


def test_a_wrong_answer_gets_a_warning_with_the_numbers_and_the_box_keeps_it(lang):
    task = course.by_id(lang)["playground-causal"]
    at = open_page("views/playground.py", lang=lang, task=task.id, **task.link)
    answer(at, "0.99")
    wrong = catalog(lang)["course.verdict.wrong"].split("{")[0]
    said = [w for w in texts(at, "warning") if w.startswith(wrong)]
    assert said and task.expected(dict(at.query_params)).replace(".", "\\.") in said[0]
    assert at.text_input(key=ANSWER).value == "0.99" and "done" not in at.query_params


def test_the_page_stays_live_and_the_task_follows_its_numbers(lang):
    task = course.by_id(lang)["playground-causal"]
    at = open_page("views/playground.py", lang=lang, task=task.id, **task.link)
    answer(at, "0")
    right = catalog(lang)["course.verdict.right"].split("{")[0]
    assert not [s for s in texts(at, "success") if s.startswith(right)]  # no mask yet: I sees you
    at.toggle(key="lab.causal").set_value(True).run()  # the page's own control, with the panel open
    assert_clean(at)
    assert [s for s in texts(at, "success") if s.startswith(right)]
    assert at.query_params["done"] == task.id and at.query_params["causal"] == "true"


@pytest.mark.parametrize(
    ("typed", "kind", "key"),
    [
        ("0,5", "info", "course.read.decimal_comma"),
        ("50%", "info", "course.read.percent"),
        ("lots", "warning", "present.error.number_form"),
    ],
)
def test_an_answer_in_another_form_is_read_or_refused_with_a_message_and_kept(typed, kind, key):
    task = course.by_id("zh")["scaling-unscaled"]
    at = open_page("views/scaling.py", lang="zh", task=task.id, **task.link)
    answer(at, typed)
    assert_clean(at)
    start = catalog("zh")[key].split("{")[0]
    assert any(start in message for message in texts(at, kind)), texts(at, kind)
    assert at.text_input(key=ANSWER).value == typed


def test_a_token_not_in_the_sentence_is_named_and_kept(lang):
    task = course.by_id(lang)["playground-top"]
    at = open_page("views/playground.py", lang=lang, task=task.id)
    answer(at, "zebra")
    start = catalog(lang)["present.error.token_unknown"].split("{")[0]
    assert any(w.startswith(start) for w in texts(at, "warning")) and at.text_input(key=ANSWER).value == "zebra"


def test_an_unknown_task_and_unknown_progress_are_said_in_the_panel(lang):
    at = open_page("views/masking.py", lang=lang, task="no-such-task", done="masking-weight,<b>x</b>")
    assert_clean(at)
    warnings = texts(at, "warning")
    assert any("`task=no-such-task`" in w for w in warnings)  # outside text in a code span, never markup
    assert any("`<b>x</b>`" in w for w in warnings)
    assert at.query_params["done"] == "masking-weight" and "task" not in at.query_params
    assert not at.get("text_input") or ANSWER not in [w.key for w in at.text_input]  # no task open
    at.button(key="_course.dismiss").click().run()
    assert not [w for w in texts(at, "warning") if "no-such-task" in w]


def test_the_hints_come_one_at_a_time_and_the_third_with_the_answer(lang):
    task = course.by_id(lang)["kv-per-token"]
    at = open_page("views/kv_cache.py", lang=lang, task=task.id)
    for n, hint in enumerate(task.hints, start=1):
        at.button(key=f"_course.hint.{task.id}").click().run()
        shown = [m.value for m in at.markdown if "lightbulb" in m.value]
        assert len(shown) == n and hint in shown[-1]
    assert any(
        "131072" in m.value for m in at.markdown if m.value.startswith(catalog(lang)["course.panel.answer_now"][:6])
    )
    assert not [b for b in at.button if b.key == f"_course.hint.{task.id}"]


def test_next_opens_the_next_tasks_page_with_its_link_and_the_progress(lang):
    tasks = course.tasks(lang)
    at = open_page("views/rope.py", lang=lang, task="rope-wavelength", done="dict-weighted")
    nxt = next(
        link for link in at.get("page_link") if link.proto.query_string and "decoder-head" in link.proto.query_string
    )
    assert nxt.proto.page == "decoder"
    query = dict(pair.split("=", 1) for pair in nxt.proto.query_string.split("&"))
    assert (
        query["task"] == tasks[13].id == "decoder-head" and query["done"] == "dict-weighted" and query["lang"] == lang
    )


def test_a_task_opened_on_another_page_points_to_its_own(lang):
    at = open_page("views/lessons.py", lang=lang, task="lm-next")
    assert_clean(at)
    where = catalog(lang)["course.panel.elsewhere"].split("{")[0]
    assert any(i.startswith(where) for i in texts(at, "info"))
    assert any(link.proto.page == "lm" for link in at.get("page_link"))
    at.button(key="_course.close").click().run()
    assert "task" not in at.query_params and not panel_prompt(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_course_page_lists_every_task_in_order_with_its_page_and_the_progress(lang):
    tasks = course.tasks(lang)
    done = [t.id for t in tasks[:3]]
    at = open_page("views/course.py", lang=lang, done=",".join(done))
    assert_clean(at)
    words = catalog(lang)
    assert at.title[0].value == words["course.overview.title"]
    prompts = [m.value for m in at.markdown if m.value in {t.prompt for t in tasks}]
    assert prompts == [t.prompt for t in tasks]
    links = [link for link in at.get("page_link") if link.proto.query_string and "task=" in link.proto.query_string]
    first = links[0].proto  # continue: the first task not done
    assert first.page == tasks[3].page and f"task={tasks[3].id}" in first.query_string
    assert [link.proto.page or "playground" for link in links[1:]] == [t.page for t in tasks]  # "": the default page
    assert words["course.overview.progress"].format(done=3, total=len(tasks)) in [
        p.proto.text for p in at.get("progress")
    ]
    assert at.query_params["done"] == ",".join(done)


def test_the_playground_offers_the_course_once_and_an_expert_can_put_it_away(lang):
    at = open_page(lang=lang)
    offer = catalog(lang)["course.offer.line"].format(total=len(course.tasks(lang)))
    assert any(offer in m.value for m in at.markdown)
    start = [
        link
        for link in at.get("page_link")
        if link.proto.query_string and "task=dict-weighted" in link.proto.query_string
    ]
    assert start and start[0].proto.page == "soft-dictionary"
    at.button(key="_course.offer_dismiss").click().run()
    assert not any(offer in m.value for m in at.markdown)
    assert not any(offer in m.value for m in open_page(lang=lang, done="dict-weighted").markdown)


@pytest.mark.parametrize(
    ("task_id", "drawn"),
    [
        ("multihead-dk", lambda at: [c for c in at.code if "d_k" in c.value]),  # section 9's code
        ("multihead-weights", lambda at: [c for c in at.code if "d_k" in c.value]),
        ("decoder-confidence", lambda at: at.dataframe),  # the guesses' table
    ],
)
def test_a_task_whose_hint_points_below_the_fold_opens_that_section(task_id, drawn):
    task = course.by_id("en")[task_id]
    at = open_page(BY_URL[task.page], lang="en", task=task.id, **task.link)
    assert_clean(at)
    assert drawn(at), task_id
    plain = open_page(BY_URL[task.page], lang="en")  # a plain visit leaves it folded: the link is what opens it
    assert not drawn(plain), task_id
