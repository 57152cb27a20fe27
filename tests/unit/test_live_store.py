"""Contract 18's store on SQLite and on a real redis-server: codes and keys, steps, answers, the tally, limits, expiry.

Every test runs on both stores (`live`): an SQLite file of its own and the session's redis-server (`redis_url`).
Time is a fake clock the test moves, so expiry and the answer rate are tested without waiting.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from attnlab.classroom import classlink
from attnlab.classroom.live import ALPHABET, StoreUnavailable, normalize_code, open_store, store_kind
from attnlab.classroom.store import new_code
from attnlab.limits import (
    CLASS_ANSWER_BURST,
    CLASS_ANSWER_WINDOW_S,
    CLASS_IDLE_S,
    MAX_CLASS_ANSWER_CHARS,
    MAX_CLASS_STUDENTS,
)
from attnlab.testing import ROOT

LINK = "text=the+cat+sat+on+the+mat&step=2&causal=true"
OTHER_LINK = "text=I+like+you&step=2&causal=true"
SHAPE, SCALING, MASK, WEIGHTS = 2, 6, 7, 8  # the steps that ask the class a question
CONCURRENT = 300


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = time.time()  # other processes in a test read the real clock

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "redis"])
def live(request, tmp_path) -> Iterator[tuple]:
    """(a store, its clock) on a fresh SQLite file, or on the session's redis-server."""
    clock = Clock()
    url = f"sqlite:///{tmp_path}/classes.db" if request.param == "sqlite" else request.getfixturevalue("redis_url")
    store = open_store(url, clock=clock)
    assert store_kind(url) == request.param
    yield store, clock
    store.close()


def test_codes_have_no_look_alikes_and_keys_carry_128_bits_or_more(live):
    store, _ = live
    assert not set("0O1IL") & set(ALPHABET)
    classes = [store.create(LINK) for _ in range(20)]
    for code, key in classes:
        assert len(code) == 6 and set(code) <= set(ALPHABET)
        assert len(base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))) * 8 >= 128
        assert code not in key
    assert len({code for code, _ in classes}) == len({key for _, key in classes}) == 20
    assert all(set(new_code()) <= set(ALPHABET) for _ in range(500))


def test_a_code_is_read_as_a_student_types_it():
    assert normalize_code(" ab c-2de ") == "ABC2DE"
    assert normalize_code("ＡＢＣ２ＤＥ") == "ABC2DE"  # full-width, from a Chinese keyboard
    for bad in ("ABC0DE", "abcde", "ABCDEFG", "", None, 123, "A" * 100, "ABCDE<"):
        assert normalize_code(bad) is None


def test_a_new_class_is_at_its_links_step_and_an_unknown_code_has_no_state(live):
    store, _ = live
    code, _ = store.create(LINK)
    assert store.state(code) == {"step": 2, "link": LINK, "revealed": False, "answers": 0}
    assert store.state(code.lower()) == store.state(code)
    assert store.state("ZZZZZZ") is None and store.state("not a code") is None


def test_a_wrong_key_raises_permission_error_and_changes_nothing(live):
    store, _ = live
    code, key = store.create(LINK)
    other_code, other_key = store.create(OTHER_LINK)
    store.answer(code, "s1", SHAPE, "6 x 8")
    before = store.state(code)
    for wrong in (other_key, key[:-1], key + "x", "", None):
        with pytest.raises(PermissionError):
            store.advance(code, wrong, WEIGHTS, OTHER_LINK)
        with pytest.raises(PermissionError):
            store.reveal(code, wrong)
        assert not store.owns(code, wrong)
    assert store.state(code) == before and store.owns(code, key) and store.owns(other_code, other_key)


def test_answers_change_until_the_reveal_and_only_on_the_current_step(live):
    store, _ = live
    code, key = store.create(LINK)
    store.answer(code, "s1", SHAPE, "8 x 6")
    store.answer(code, "s1", SHAPE, "(6, 8)")  # changed: one answer per student per step
    store.answer(code, "s2", SHAPE, "６×８")
    assert store.state(code)["answers"] == 2
    assert store.tally(code, SHAPE) == {"6 × 8": 2}
    with pytest.raises(ValueError, match="not the class's current step"):
        store.answer(code, "s3", WEIGHTS, "1")
    store.reveal(code, key)
    assert store.state(code)["revealed"]
    with pytest.raises(ValueError, match="revealed"):
        store.answer(code, "s1", SHAPE, "8 x 6")
    assert store.tally(code, SHAPE) == {"6 × 8": 2}
    store.advance(code, key, 3)
    with pytest.raises(ValueError, match="no question"):
        store.answer(code, "s1", 3, "anything")
    store.advance(code, key, SHAPE)  # back to a revealed step: still revealed, its answers kept
    assert store.state(code) == {"step": SHAPE, "link": LINK, "revealed": True, "answers": 2}
    with pytest.raises(KeyError):
        store.answer("ZZZZZZ", "s1", SHAPE, "6 x 8")


def test_a_new_link_starts_a_new_round_of_answers(live):
    store, _ = live
    code, key = store.create(LINK)
    store.answer(code, "s1", SHAPE, "6 x 8")
    store.reveal(code, key)
    store.advance(code, key, SHAPE, OTHER_LINK)  # the teacher changed the sentence: new questions
    assert store.state(code) == {"step": SHAPE, "link": OTHER_LINK, "revealed": False, "answers": 0}
    store.answer(code, "s1", SHAPE, "3 x 8")
    assert store.tally(code, SHAPE) == {"3 × 8": 1}
    store.advance(code, key, SHAPE, OTHER_LINK)  # the same link again: the same round
    assert store.state(code)["answers"] == 1


def test_the_tally_folds_answers_through_the_questions_own_parse(live):
    store, _ = live
    code, key = store.create(LINK)
    link = LINK.replace("step=2", "step=8")
    store.advance(code, key, WEIGHTS, link)
    for i, text in enumerate(["0.5", " .50", "0,5", "１", "1.0", "  Half ", "half", "1, 1, 1, 1, 1, 1"]):
        store.answer(code, f"s{i}", WEIGHTS, text)
    tally = store.tally(code, WEIGHTS)
    assert tally == {"0.5": 3, "1": 2, "half": 2, "1, 1, 1, 1, 1, 1": 1}
    question = classlink.class_question(link, WEIGHTS)
    assert question.qid == "row_sum"
    assert {k for k in tally if classlink.right(question, k)} == {"1", "1, 1, 1, 1, 1, 1"}


def test_a_step_whose_question_is_a_choice_or_cells_folds_them_too(live):
    store, _ = live
    code, key = store.create(LINK)
    store.advance(code, key, SCALING)
    for i, text in enumerate(["a", "A", "peaked", "2", "c"]):
        store.answer(code, f"s{i}", SCALING, text)
    assert store.tally(code, SCALING) == {"peaked": 3, "flatter": 1, "unchanged": 1}
    store.advance(code, key, MASK)  # 6 tokens, causal: the cells above the diagonal (a count past 8 tokens)
    cells = " ".join(f"({i},{j})" for i in range(1, 7) for j in range(i + 1, 7))
    store.answer(code, "s1", MASK, cells)
    store.answer(code, "s2", MASK, cells.replace(" ", "；"))
    store.answer(code, "s3", MASK, "无")
    tally = store.tally(code, MASK)
    assert tally == {cells: 2, "none": 1}
    assert classlink.right(classlink.class_question(LINK, MASK), cells)


def test_the_limits_students_answer_length_and_rate(live):
    store, clock = live
    code, key = store.create(LINK)
    store.answer(code, "s0", SHAPE, "x" * MAX_CLASS_ANSWER_CHARS)
    with pytest.raises(ValueError, match=f"at most {MAX_CLASS_ANSWER_CHARS} characters"):
        store.answer(code, "s0", SHAPE, "x" * (MAX_CLASS_ANSWER_CHARS + 1))
    for bad in ("", "   "):
        with pytest.raises(ValueError, match="empty"):
            store.answer(code, "s0", SHAPE, bad)
    for i in range(1, MAX_CLASS_STUDENTS):
        store.answer(code, f"s{i}", SHAPE, "6 x 8")
    with pytest.raises(ValueError, match=f"already has {MAX_CLASS_STUDENTS} students"):
        store.answer(code, "one too many", SHAPE, "6 x 8")
    store.answer(code, "s1", SHAPE, "8 x 6")  # a student already in the class may still change their answer
    for _ in range(CLASS_ANSWER_BURST - 2):
        store.answer(code, "s1", SHAPE, "6 x 8")
    with pytest.raises(ValueError, match="too many answers"):
        store.answer(code, "s1", SHAPE, "6 x 8")
    clock.now += CLASS_ANSWER_WINDOW_S
    store.answer(code, "s1", SHAPE, "6 x 8")
    assert store.state(code)["answers"] == MAX_CLASS_STUDENTS
    with pytest.raises(ValueError, match="step"):
        store.advance(code, key, 12)


def test_a_class_expires_six_hours_after_its_last_change(live):
    store, clock = live
    code, key = store.create(LINK)
    clock.now += CLASS_IDLE_S - 1
    store.answer(code, "s1", SHAPE, "6 x 8")  # an answer is a change: the class lives on
    clock.now += CLASS_IDLE_S - 1
    assert store.state(code)["answers"] == 1
    clock.now += 2
    assert store.state(code) is None
    for call in (lambda: store.answer(code, "s1", SHAPE, "6 x 8"), lambda: store.advance(code, key, 3)):
        with pytest.raises(KeyError):
            call()
    with pytest.raises(KeyError):
        store.tally(code, SHAPE)


def test_300_answers_at_once_are_all_counted(live):
    store, _ = live
    code, _ = store.create(LINK)
    barrier, failed = threading.Barrier(CONCURRENT), []

    def answer(i: int) -> None:
        barrier.wait()
        try:
            store.answer(code, f"student-{i}", SHAPE, "6 x 8" if i % 3 else f"{i % 7} x 8")
        except Exception as e:  # noqa: BLE001 (collected and shown below)
            failed.append(repr(e))

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(CONCURRENT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    assert store.state(code)["answers"] == CONCURRENT
    assert sum(store.tally(code, SHAPE).values()) == CONCURRENT


OTHER_PROCESS = """
import sys
from attnlab.classroom.live import open_store
for url, code in zip(sys.argv[1::2], sys.argv[2::2]):
    store = open_store(url)
    for i in range(150):
        store.answer(code, f"there-{i}", 2, "6 x 8")
    print(store.state(code)["answers"])
"""


def test_two_processes_share_a_class(redis_url, tmp_path):
    """The teacher's process creates a class on each store; a second process's students answer while this one's do,
    and each sees the other's answers (one interpreter for both stores: its start is most of the test's time)."""
    urls = [f"sqlite:///{tmp_path}/classes.db", redis_url]
    stores = [open_store(url) for url in urls]
    classes = [store.create(LINK) for store in stores]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [arg for url, (code, _) in zip(urls, classes, strict=True) for arg in (url, code)]
    other = subprocess.Popen([sys.executable, "-c", OTHER_PROCESS, *args], env=env, stdout=subprocess.PIPE, text=True)
    for store, (code, _) in zip(stores, classes, strict=True):
        for i in range(150):
            store.answer(code, f"here-{i}", SHAPE, "8 x 6")
    out, _ = other.communicate(timeout=120)
    assert other.returncode == 0 and all(150 <= int(n) <= 300 for n in out.split())
    for url, store, (code, key) in zip(urls, stores, classes, strict=True):
        assert store.tally(code, SHAPE) == {"6 × 8": 150, "8 × 6": 150}
        store.reveal(code, key)
        assert open_store(url).state(code) == {"step": SHAPE, "link": LINK, "revealed": True, "answers": 300}


def test_a_store_that_cannot_be_reached_says_so_in_one_line(tmp_path):
    from attnlab.testing import free_port

    store = open_store(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(StoreUnavailable) as raised:
        store.state("ABCDEF")
    assert "\n" not in str(raised.value) and "cannot be reached" in str(raised.value)
    (tmp_path / "ro").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        with pytest.raises(StoreUnavailable):
            open_store(f"sqlite:///{tmp_path}/ro/classes.db")
    with pytest.raises(ValueError, match="unknown store"):
        open_store("postgres://x")


def test_the_default_store_is_a_private_sqlite_file_in_the_temp_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("ATTNLAB_CLASS_STORE", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    store = open_store()
    assert store_kind() == "sqlite" and os.path.dirname(store.path) == str(tmp_path)
    assert os.stat(store.path).st_mode & 0o077 == 0
    code, _ = store.create(LINK)
    assert open_store().state(code)["step"] == SHAPE
