"""The Trained decoder page's numbers: positions line up past a start marker, losses split by repeats, the lookup."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.ui.pages.decoder.numbers import (
    accuracy_on_repeats,
    mean_losses,
    predictions,
    previous_followers,
    random_repeating,
    strongest_induction,
)

VOCAB = ("a", "b", "c")


def one_hot_probs(rows: list[list[float]]) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("marker", [True, False])
def test_each_row_predicts_the_symbol_after_its_token_with_or_without_a_start_marker(marker):
    symbols = ["a", "b", "a", "b"]
    rows = [[0.2, 0.5, 0.3], [0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.05, 0.9, 0.05], [0.3, 0.3, 0.4]]
    probs = one_hot_probs(rows if marker else rows[1:])
    tokens = (["<s>"] if marker else []) + symbols
    preds = predictions(probs, tokens, symbols, VOCAB)
    assert [p.actual for p in preds] == ["b", "a", "b", None]
    assert [p.repeat for p in preds] == [False, True, True, False]
    assert preds[0].loss == pytest.approx(-np.log(0.8))  # the row after 'a' gives 'b' 0.8
    assert preds[1].loss == pytest.approx(-np.log(0.7)) and preds[1].right is True  # best guess 'a', right
    assert preds[2].top[0] == ("b", pytest.approx(0.9)) and preds[2].right is True
    assert preds[3].loss is None and preds[3].right is None
    first, repeat = mean_losses(preds)
    assert first == pytest.approx(-np.log(0.8))
    assert repeat == pytest.approx((-np.log(0.7) - np.log(0.9)) / 2)
    assert accuracy_on_repeats(preds) == 1.0


def test_a_random_sequence_repeats_distinct_symbols_and_is_seeded():
    vocab = tuple("abcdefghij")
    s = random_repeating(vocab, 4, 10, seed=3)
    assert len(set(s[:4])) == 4 and s[4:8] == s[:4] and s[8:] == s[:2]
    assert s == random_repeating(vocab, 4, 10, seed=3) and s != random_repeating(vocab, 4, 10, seed=4)


def test_the_head_that_looks_up_what_followed_last_time_is_found():
    symbols = ["k", "x", "m", "k"]
    assert previous_followers(symbols) == [1] and previous_followers(["a", "b"]) == []
    tokens = ["<s>", *symbols]
    attentions = np.zeros((2, 2, 5, 5), dtype=np.float32)  # (L, H, T, T)
    attentions[:, :, -1, -1] = 1.0
    attentions[1, 0, -1] = [0.0, 0.0, 0.91, 0.0, 0.09]  # head 2.1: 0.91 on 'x', which followed the first 'k'
    found = strongest_induction(attentions, tokens, symbols)
    assert (found.layer, found.head, found.followers, found.symbol) == (1, 0, ("x",), "k")
    assert found.weight == pytest.approx(0.91)


def test_the_lookup_counts_every_earlier_occurrence_as_the_induction_score_does():
    symbols = list("kxmkxmk")  # the last 'k' was followed by 'x' twice before
    assert previous_followers(symbols) == [1, 4]
    tokens = ["<s>", *symbols]
    attentions = np.zeros((1, 2, 8, 8), dtype=np.float32)
    attentions[0, 0, -1, [2, 5, 7]] = [0.45, 0.45, 0.10]  # head 1.1 splits its weight over both 'x'
    attentions[0, 1, -1, [5, 7]] = [0.6, 0.4]  # head 1.2 puts more on one 'x' alone
    found = strongest_induction(attentions, tokens, symbols)
    assert (found.head, found.followers) == (0, ("x",)) and found.weight == pytest.approx(0.9)
    assert previous_followers(list("kxmkyz")) == []  # 'z' never occurred before: nothing to look up
