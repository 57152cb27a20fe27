"""A class link read as the presenter reads it, each step's class question, and the tally's fold of any answer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.classroom import classlink
from attnlab.classroom.answers import AnswerError
from attnlab.classroom.build import questions_for_stage
from attnlab.classroom.questions import ArgmaxQuestion
from attnlab.pipeline import LabConfig, run_lab
from attnlab.stages import N_STEPS, step

LINK = "text=the+cat+sat+on+the+mat&causal=true&heads=2&d_model=8&seed=3&step=8"
QUESTION_STEPS = (2, 6, 7, 8)
FORMS = [  # what students type, right and wrong, readable and not
    "6 x 8", "(6, 8)", "６×８", "8×6", "1, 6, 8", "five by eight", "a", "B", "peaked", "3", "0", "none", "无",
    "(1,2) (1,3)", "1-2；1-3", "1,1", "cat", "CAT", "the", "2", "#3", "99", "1", "1.0", " .50", "0,5", "１",
    "1, 1, 1, 1, 1, 1", "0.999", "half", "", "   ", "<b>x</b>", "[a](http://e.x)",
]  # fmt: skip


def test_a_link_is_read_as_the_presenter_reads_it():
    read = classlink.read_link(LINK)
    assert read.config == LabConfig("the cat sat on the mat", 8, 2, True, 3, mask="causal", kv_heads=2)
    assert (read.step, read.quiz, read.head_choice, read.shown) == (8, True, 0, (0, 1))
    bad = classlink.read_link("heads=3&d_model=8&head=9&step=99&causal=maybe")
    assert bad.config.heads == 2 and bad.step == N_STEPS and bad.shown == (0, 1)  # replaced, as the page does
    assert classlink.read_link("head=2&heads=2").head == 1
    with pytest.raises(ValueError):
        classlink.read_link("step")  # a piece with no value is not a query


def test_link_of_keeps_the_state_and_drops_each_readers_own_settings():
    query = {"text": "a b", "step": "3", "lang": "zh", "palette": "cb", "edits": "q0.0=1", "class": "ABCDEF"}
    assert classlink.link_of(query) == "text=a%20b&step=3&edits=q0.0%3D1"


def test_each_question_step_asks_the_class_one_of_the_presenters_questions():
    read = classlink.read_link(LINK)
    for number in range(1, N_STEPS + 1):
        question = classlink.class_question(LINK, number)
        if number not in QUESTION_STEPS:
            assert question is None and not classlink.has_question(LINK, number)
            continue
        asked = questions_for_stage(step(number).name, read.config, run_lab(read.config), head=read.head)
        assert question.uid in [q.uid for q in asked] and question.qid == ("row_sum" if number == 8 else asked[0].qid)
    assert classlink.class_question(LINK.replace("causal=true", "causal=true&quiz=false"), 2) is None
    assert classlink.class_question(LINK.replace("the+cat+sat+on+the+mat", "+"), 2) is None


@given(st.sampled_from(QUESTION_STEPS), st.one_of(st.sampled_from(FORMS), st.text(max_size=30)))
def test_the_fold_is_the_grades_parse_and_reads_back_the_same(number, raw):
    question = classlink.class_question(LINK, number)
    key, error = classlink.fold(question, raw)
    try:
        grade = question.grade(raw)
    except AnswerError:
        assert error is not None and key == raw.strip().casefold()
        return
    assert error is None and classlink.right(question, key) == grade.correct
    if not isinstance(question, ArgmaxQuestion):  # its fold names positions, which its parse does not read
        assert classlink.fold(question, key) == (key, None)


def test_argmax_folds_a_token_and_its_position_as_one():
    question = next(q for q in questions_for_stage("weights", *_run(LINK), head=0) if isinstance(q, ArgmaxQuestion))
    tokens = question.tokens
    j = question.top[0]
    by_text = classlink.fold(question, tokens[j])[0] if tokens.count(tokens[j]) == 1 else None
    by_position = classlink.fold(question, str(j + 1))[0]
    assert classlink.right(question, by_position)
    assert by_text in (None, by_position)
    assert not classlink.right(question, by_position.replace(tokens[j], "zz"))  # typed text that only looks like one


def _run(link: str):
    config = classlink.read_link(link).config
    return config, run_lab(config)


@pytest.mark.parametrize(("text", "raw", "read"), [("a b c", "0,5", [0.5]), ("a b", "0,5", [0.0, 5.0])])
def test_a_lone_decimal_comma_is_a_decimal_where_two_numbers_cannot_answer(text, raw, read):
    config = LabConfig(text)
    question = next(q for q in questions_for_stage("weights", config, run_lab(config)) if q.qid == "row_sum")
    assert question.read(raw) == read
