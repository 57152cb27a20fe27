"""The live class through the real pages: a teacher's presenter and students' sessions in AppTest, on a real store.

Each AppTest is one browser session. A student's poll is the page's fragment, which AppTest does not time: a rerun of
the student's page stands for the poll that finds a change. Both languages run; the stores are an SQLite file per
test and, for the whole flow, the session's redis-server too.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.classroom.live import ALPHABET, open_store
from attnlab.limits import CLASS_ANSWER_BURST, RTOL_FLOAT32, TOL_FLOAT32
from attnlab.testing import app_test, free_port
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.viewport import BAND, PHONE_PX
from tests.app.charts import figures, heatmap_values
from tests.app.conftest import assert_clean, open_page, texts

PRESENT = "views/present.py"
TEXT = "the cat sat on the mat"
TEACH = "live.teach"


@pytest.fixture
def store_url(tmp_path, monkeypatch) -> str:
    """A class store of this test's own, named the way a server is told (ATTNLAB_CLASS_STORE)."""
    url = f"sqlite:///{tmp_path}/classes.db"
    monkeypatch.setenv("ATTNLAB_CLASS_STORE", url)
    return url


def click(at, lang: str, key: str):
    """Click the button labelled with the catalog string `key` and run."""
    label = catalog(lang)[key]
    found = [b for b in at.button if b.label == label]
    assert found, (label, [b.label for b in at.button])
    return found[0].click().run()


def start_class(lang: str = "en", **query: str):
    """A teacher's presenter with a class started on it: (the AppTest, the code, the key)."""
    at = open_page(PRESENT, text=TEXT, lang=lang, **query)
    click(at, lang, "live.ui.start")
    assert_clean(at)
    held = at.session_state[TEACH]
    return at, held["code"], held["key"]


def student(code: str, lang: str = "zh"):
    """A student's phone opening the class link."""
    at = open_page(PRESENT, **{"class": code, "lang": lang})
    assert_clean(at)
    return at


def main_text(at) -> str:
    """Everything the main column shows (not the sidebar), as one string."""
    return " ".join(str(getattr(e, "value", "")) for e in at.main)


def test_the_teacher_starts_a_class_and_only_the_code_reaches_the_link_and_the_projector(store_url, lang):
    at, code, key = start_class(lang, step="2")
    assert len(code) == 6 and set(code) <= set(ALPHABET)
    assert at.query_params["class"] == [code] or at.query_params["class"] == code
    assert key not in repr(dict(at.query_params)) and key not in main_text(at)
    assert f"# {code}" in [m.value for m in at.sidebar.markdown]  # the code in large type
    assert len(at.sidebar.get("image")) == 1  # and the QR code of the address
    assert open_store(store_url).state(code) == {
        "step": 2,
        "link": open_store(store_url).state(code)["link"],
        "revealed": False,
        "answers": 0,
    }
    assert catalog(lang)["live.ui.answered"] in [m.label for m in at.metric]


def test_a_student_sees_the_teachers_step_with_the_same_matrices(store_url, lang):
    teacher, code, _ = start_class("en", step="8", causal="true", heads="2", seed="5", quiz="false")
    phone = student(code, lang)
    strings = catalog(lang)
    assert any(m.value == f"#### 8. {strings['present.step.8.title']}" for m in phone.markdown)
    ours, theirs = heatmap_values(teacher, 0), heatmap_values(phone, 0)
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL_FLOAT32, atol=TOL_FLOAT32, equal_nan=True)
    click(teacher, "en", "present.ui.next")
    phone.run()  # the poll that finds the new step
    assert any(m.value == f"#### 9. {strings['present.step.9.title']}" for m in phone.markdown)
    assert not teacher.exception and not phone.exception


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_answers_reach_the_count_and_the_reveal_reaches_the_students(kind, store_url, request, monkeypatch):
    if kind == "redis":
        monkeypatch.setenv("ATTNLAB_CLASS_STORE", request.getfixturevalue("redis_url"))
    teacher, code, _ = start_class("en", step="2")
    right, wrong = student(code, "zh"), student(code, "en")
    right.text_input[0].input("（6，8）")
    click(right, "zh", "live.student.send")
    wrong.text_input[0].input("8 x 6")
    click(wrong, "en", "live.student.send")
    assert not right.get("plotly_chart") and not wrong.get("plotly_chart")  # the matrix waits for the reveal
    teacher.run()
    assert [m.value for m in teacher.metric if m.label == "Answered"] == ["2"]
    assert not teacher.get("plotly_chart")  # the count, never the answers, before the reveal
    click(teacher, "en", "live.ui.reveal")
    tally = [f for f in figures(teacher) if f["data"][0].get("type") == "bar"]
    assert len(tally) == 1 and sorted(tally[0]["data"][0]["x"]) == [1, 1]
    assert "✓ 6 × 8" in tally[0]["data"][0]["y"]
    for phone, lang, verdict in ((right, "zh", "success"), (wrong, "en", "error")):
        phone.run()
        assert texts(phone, verdict) and len(phone.get("plotly_chart")) == 2  # the verdict, the tally, the matrix
        score = next(c.value for c in phone.caption if catalog(lang)["live.student.score"] in c.value)
        assert ("1 / 1" if verdict == "success" else "0 / 1") in score


def test_a_student_looks_back_and_follows_the_teacher_again(store_url, lang):
    teacher, code, _ = start_class("en", step="4", quiz="false")
    phone = student(code, lang)
    strings = catalog(lang)
    click(phone, lang, "live.student.back")
    assert any(m.value.startswith("#### 3.") for m in phone.markdown)
    assert texts(phone, "info") == [strings["live.student.looking"].format(k=3, teacher=4)]
    click(teacher, "en", "present.ui.next")
    phone.run()
    assert any(m.value.startswith("#### 3.") for m in phone.markdown)  # still looking back while the teacher moves
    click(phone, lang, "live.student.follow")
    assert any(m.value.startswith("#### 5.") for m in phone.markdown)


def test_an_unknown_code_says_so_in_the_students_language_and_takes_another(store_url, lang):
    teacher, code, _ = start_class("en", step="3")
    phone = student("ZZZZZZ", lang)
    strings = catalog(lang)
    assert any(strings["live.student.unknown"].split("{code}")[0] in w for w in texts(phone, "warning"))
    box = next(b for b in phone.text_input if b.key == "live.join_code.unknown")
    box.input("k7qm0p")  # a 0 is never in a code
    click(phone, lang, "live.ui.join")
    assert any("k7qm0p" in w for w in texts(phone, "warning"))
    next(b for b in phone.text_input if b.key == "live.join_code.unknown").input(code.lower())
    click(phone, lang, "live.ui.join")
    assert any(m.value.startswith("#### 3.") for m in phone.markdown) and not teacher.exception


def test_answers_show_as_text_and_refusals_are_one_line_in_the_students_language(store_url, lang):
    _, code, _ = start_class("en", step="2")
    phone = student(code, lang)
    hostile = "<b>x</b> [a](http://e.x) ![i](http://e.x/i.png)"
    phone.text_input[0].input(hostile)
    click(phone, lang, "live.student.send")
    infos = texts(phone, "info")
    assert any(f"`{hostile}`" in i for i in infos)  # an inline code span: shown as typed, never markup
    assert catalog(lang)["present.error.shape_form"] in "".join(texts(phone, "warning"))  # the form it expects
    for _ in range(CLASS_ANSWER_BURST):
        click(phone, lang, "live.student.send")
    refused = catalog(lang)["live.refused.rate"].split("{")[0]
    assert any(w.startswith(refused) and "\n" not in w for w in texts(phone, "warning"))


def test_a_teacher_who_lost_the_session_resumes_with_the_key_and_a_wrong_key_changes_nothing(store_url, lang):
    teacher, code, key = start_class("en", step="5", seed="9")
    lost = student(code, lang)  # the same link, a new session: a student's view until the key is given
    lost.session_state["live.resume_open"] = True  # the teacher opens "I am this class's teacher"
    lost.run()
    lost.text_input(key="live.resume_key").input(f"{code}:{key[:-2]}")
    click(lost, lang, "live.ui.resume")
    assert TEACH not in lost.session_state and texts(lost, "warning")
    lost.text_input(key="live.resume_key").input(f"{code}:{key}")
    click(lost, lang, "live.ui.resume")
    assert_clean(lost)
    assert lost.session_state[TEACH] == {"code": code, "key": key}
    assert lost.query_params["seed"] in ("9", ["9"]) and lost.query_params["step"] in ("5", ["5"])
    click(lost, lang, "present.ui.next")
    assert open_store(store_url).state(code)["step"] == 6


def test_a_store_that_cannot_be_reached_is_said_and_the_presenter_keeps_working(monkeypatch, lang):
    monkeypatch.setenv("ATTNLAB_CLASS_STORE", f"redis://127.0.0.1:{free_port()}/0")
    at = open_page(PRESENT, text=TEXT, step="3", lang=lang, quiz="false")
    click(at, lang, "live.ui.start")
    assert_clean(at)
    assert texts(at, "error") and len(at.get("plotly_chart")) == 1  # said, and the step still draws
    phone = student("ABCDEF", lang)
    assert texts(phone, "error") and catalog(lang)["live.student.retry"] in [b.label for b in phone.button]


def test_a_phone_on_the_presenter_finds_the_join_box_first_and_joins(store_url, lang):
    _, code, _ = start_class("en", step="6")
    phone = app_test(url_path="present")
    phone.session_state[BAND] = PHONE_PX  # what a phone's browser reports (its sidebar is folded away)
    phone.session_state["live.join_open.phone"] = True
    phone.query_params.update(lang=lang)
    phone.run()
    assert phone.main.expander[0].label == catalog(lang)["live.ui.join_title"]  # the first thing on the page
    next(b for b in phone.text_input if b.key == "live.join_code.phone").input(f" {code[:3]}-{code[3:].lower()} ")
    click(phone, lang, "live.ui.join")
    assert_clean(phone)
    assert any(m.value.startswith("#### 6.") for m in phone.markdown)
    desktop = open_page(PRESENT, lang=lang)
    assert "live.join_open.phone" not in [getattr(e, "key", None) for e in desktop.main.expander]


def test_no_masked_cell_is_said_in_each_readers_language_not_as_its_spelling(store_url):
    """At the mask step without a causal mask the right answer is no cell at all: the store counts it as one
    spelling, which neither the student's confirmation nor the teacher's tally shows."""
    teacher, code, _ = start_class("zh", step="7", causal="false")
    phone = student(code, "zh")
    click(phone, "zh", "live.student.send")  # nothing picked: no cell is masked
    none = catalog("zh")["present.ui.none_blocked"]
    sent = " ".join(texts(phone, "info"))
    assert none in sent and "none" not in sent
    click(teacher, "zh", "live.ui.reveal")
    tally = [f for f in figures(teacher) if f["data"][0].get("type") == "bar"]
    labels = " ".join(tally[0]["data"][0]["y"])
    assert none in labels and "none" not in labels
