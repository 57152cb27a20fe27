"""Student answers in any reasonable form: round trips of generated shapes, numbers and cells, and clear refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.classroom.answers import (
    AnswerError,
    parse_choice,
    parse_mask_cells,
    parse_number,
    parse_numbers,
    parse_shape,
    parse_token,
)
from attnlab.ui.app.i18n import LANGS, catalog

BRACKETS = [("", ""), ("(", ")"), ("[", "]"), ("（", "）"), ("【", "】"), ("{", "}")]
DIM_SEPARATORS = [",", ", ", "，", "、", " ", "  ", "x", "X", "×", " × ", "*", ";", "；", "：", "\u3000"]
LIST_SEPARATORS = [",", ", ", "，", "、", " ", ";", "；", "\u3000"]
SPACE = st.sampled_from(["", " ", "  ", "\u3000", "\t"])


def full_width(text: str) -> str:
    """ASCII as typed with a Chinese IME in full-width mode: ５，ｄ，（ and the ideographic space."""
    return "".join("\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@st.composite
def written(draw, parts: list[str], separators: list[str]) -> str:
    """Parts joined by random separators, in random brackets, maybe full-width, with stray spaces around."""
    text = parts[0]
    for part in parts[1:]:
        text += draw(st.sampled_from(separators)) + part
    left, right = draw(st.sampled_from(BRACKETS))
    text = left + text + right
    if draw(st.booleans()):
        text = full_width(text)
    return draw(SPACE) + text + draw(SPACE)


@given(st.data(), st.lists(st.integers(1, 10**6), min_size=1, max_size=4))
def test_shapes_round_trip(data, dims):
    raw = data.draw(written([str(d) for d in dims], DIM_SEPARATORS))
    assert parse_shape(raw) == tuple(dims), raw


number_texts = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.floats(0, 1).map(lambda x: f"{x:.3f}"),
)


@given(st.data(), number_texts)
def test_numbers_round_trip(data, text):
    prefix = data.draw(st.sampled_from(["", "≈", "≈ ", "~"]))
    raw = data.draw(written([prefix + text], [","]))
    assert parse_number(raw) == float(text), raw


@given(st.data(), st.lists(number_texts, min_size=1, max_size=8))
def test_number_lists_round_trip(data, texts):
    raw = data.draw(written(texts, LIST_SEPARATORS))
    assert parse_numbers(raw) == [float(t) for t in texts], raw


@given(st.data(), st.integers(2, 8))
def test_mask_cells_round_trip(data, t):
    cells = data.draw(st.sets(st.tuples(st.integers(0, t - 1), st.integers(0, t - 1)), min_size=1, max_size=12))
    pair_sep = data.draw(st.sampled_from([",", "，", "-", " ", ":"]))
    pairs = [f"({i + 1}{pair_sep}{j + 1})" for i, j in sorted(cells)]
    raw = data.draw(written(pairs, [" ", ";", "；", "、", ", "]))
    assert parse_mask_cells(raw, t, count_ok=False).cells == cells, raw


@pytest.mark.parametrize("raw", ["(5, 8)", "5x8", "５×８", "（5，8）", "5 8", "【5、8】", "5*8", " 5 X 8 ", "[5;8]"])
def test_shape_forms_from_the_brief(raw):
    assert parse_shape(raw) == (5, 8)


@pytest.mark.parametrize("raw", ["1", "1.0", "１", "１．０", "≈1", " 1 "])
def test_one_in_every_form(raw):
    assert parse_number(raw) == 1.0


def test_near_one_is_read_as_typed():
    assert parse_number("0.999") == 0.999


TOKENS = ["<BOS>", "I", "like", "you", "<EOS>", "The", "the", "3", "我"]


@pytest.mark.parametrize(
    ("raw", "positions", "by_position"),
    [
        ("you", {3}, False),
        ("  you ", {3}, False),
        ('"you"', {3}, False),
        ("“you”", {3}, False),
        ("「you」", {3}, False),
        ("YOU", {3}, False),
        ("ｙｏｕ", {3}, False),
        ("<bos>", {0}, False),
        ("The", {5}, False),
        ("the", {6}, False),
        ("3", {7}, False),  # the token "3" wins over position 3
        ("4", {3}, True),
        ("４", {3}, True),
        ("#2", {1}, True),
        ("我", {8}, False),
    ],
)
def test_tokens_by_text_or_position(raw, positions, by_position):
    pick = parse_token(raw, TOKENS)
    assert pick.positions == frozenset(positions) and pick.by_position == by_position


def test_a_repeated_token_names_all_its_positions():
    assert parse_token("the", ["the", "cat", "sat", "on", "the", "mat"]).positions == {0, 4}


@pytest.mark.parametrize(
    ("raw", "t", "cells", "count"),
    [
        ("none", 5, set(), 0),
        ("None.", 5, set(), 0),
        ("无", 5, set(), 0),
        ("没有。", 5, set(), 0),
        ("0", 5, set(), 0),
        ("（1，2）、（1，3）", 5, {(0, 1), (0, 2)}, 2),
        ("1-2; 1-3", 5, {(0, 1), (0, 2)}, 2),
        ("1,2 1,2", 5, {(0, 1)}, 1),
    ],
)
def test_mask_answers(raw, t, cells, count):
    answer = parse_mask_cells(raw, t, count_ok=False)
    assert answer.cells == frozenset(cells) and answer.count == count


def test_a_count_is_read_only_where_a_count_is_asked():
    assert parse_mask_cells("４５", 10, count_ok=True).count == 45
    assert parse_mask_cells("45", 10, count_ok=True).cells is None
    with pytest.raises(AnswerError) as refused:
        parse_mask_cells("45", 5, count_ok=False)
    assert refused.value.reason == "present.error.cells_need_pairs"


@pytest.mark.parametrize(
    ("raw", "choice"),
    [("peaked", "peaked"), ("B", "flatter"), ("Ｃ", "unchanged"), ("(a)", "peaked"), ("2", "flatter")],
)
def test_choices(raw, choice):
    assert parse_choice(raw, ("peaked", "flatter", "unchanged")) == choice


REFUSED = [
    (parse_shape, ("",), "empty"),
    (parse_shape, ("   ",), "empty"),
    (parse_shape, ("T x d_model",), "shape_form"),
    (parse_shape, ("5 x 0",), "shape_form"),
    (parse_shape, ("5.5 x 8",), "shape_form"),
    (parse_shape, ("1 2 3 4 5",), "shape_form"),
    (parse_shape, ("9" * 500,), "too_long"),
    (parse_number, ("one",), "number_form"),
    (parse_number, ("0,5",), "number_form"),
    (parse_number, ("inf",), "number_form"),
    (parse_number, ("nan",), "number_form"),
    (parse_numbers, ("1, x",), "number_form"),
    (parse_token, ("cat", TOKENS), "token_unknown"),
    (parse_token, ("THE", TOKENS), "token_ambiguous"),
    (parse_token, ("10", TOKENS), "position_range"),
    (parse_token, ("0", TOKENS), "position_range"),
    (parse_mask_cells, ("above the diagonal", 5), "cells_form"),
    (parse_mask_cells, ("1,2 3", 5), "cells_odd"),
    (parse_mask_cells, ("1,6", 5), "cells_range"),
    (parse_mask_cells, ("0,1", 5), "cells_range"),
    (parse_choice, ("maybe", ("peaked", "flatter", "unchanged")), "choice_unknown"),
    (parse_choice, ("4", ("peaked", "flatter", "unchanged")), "choice_unknown"),
]


@pytest.mark.parametrize(("parse", "args", "reason"), REFUSED)
def test_refusals_keep_the_text_and_say_what_is_expected(parse, args, reason):
    kwargs = {"count_ok": False} if parse is parse_mask_cells else {}
    with pytest.raises(AnswerError) as refused:
        parse(*args, **kwargs)
    error = refused.value
    assert error.reason == f"present.error.{reason}" and error.raw == args[0]
    for lang in LANGS:
        assert catalog(lang)[error.reason].format(**error.fields).strip()
