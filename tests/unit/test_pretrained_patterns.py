"""Head finder: each pattern score on attention built so that the answer is known, and on a real run."""

from __future__ import annotations

import math

import pytest
import torch

from attnlab.pretrained import PATTERNS, head_scores, load_minilm
from attnlab.pretrained.patterns import is_punctuation

TOKENS = ("[CLS]", "the", "cat", ",", "sat", "!", "[SEP]")
T = len(TOKENS)


def shifted(offset: int) -> torch.Tensor:
    """(T, T) attention where query i looks only at key i + offset, clamped to the sentence."""
    rows = torch.arange(T)
    return torch.eye(T)[(rows + offset).clamp(0, T - 1)]


def to_key(position: int) -> torch.Tensor:
    """(T, T) attention where every query looks only at one key."""
    return torch.zeros(T, T).index_fill_(1, torch.tensor([position]), 1.0)


def one_head(attention: torch.Tensor) -> dict[str, float]:
    """Every score of a single-layer, single-head model with this (T, T) map."""
    return head_scores(attention[None, None], TOKENS).rows()[0]


def test_a_perfect_previous_token_head_scores_one_on_previous():
    scores = one_head(shifted(-1))
    assert scores["previous"] == 1.0
    assert scores["next"] == 0.0 and scores["entropy"] == 0.0
    assert scores["self"] == pytest.approx(1 / T)  # query 0 has no previous token: it falls back on itself


def test_a_perfect_next_token_head_scores_one_on_next():
    scores = one_head(shifted(1))
    assert scores["next"] == 1.0 and scores["previous"] == 0.0
    assert scores["sep"] == pytest.approx(2 / T)  # the last two queries land on [SEP]


def test_identity_attention_scores_one_on_self():
    scores = one_head(torch.eye(T))
    assert scores["self"] == 1.0 and scores["previous"] == 0.0 and scores["next"] == 0.0
    assert scores["cls"] == pytest.approx(1 / T) and scores["punctuation"] == pytest.approx(2 / T)


@pytest.mark.parametrize("position,pattern", [(0, "cls"), (T - 1, "sep"), (3, "punctuation"), (5, "punctuation")])
def test_every_query_on_one_key(position, pattern):
    scores = one_head(to_key(position))
    assert scores[pattern] == 1.0 and scores["entropy"] == 0.0
    others = {"cls", "sep", "punctuation"} - {pattern}
    assert all(scores[p] == 0.0 for p in others)


def test_uniform_attention_has_entropy_one_and_spreads_every_score():
    scores = one_head(torch.full((T, T), 1 / T))
    assert scores["entropy"] == pytest.approx(1.0)
    for pattern in ("cls", "sep", "previous", "next", "self"):
        assert scores[pattern] == pytest.approx(1 / T)
    assert scores["punctuation"] == pytest.approx(2 / T)


def test_entropy_is_divided_by_log_t():
    """Every query splitting evenly over two keys: ln 2 / ln T."""
    half = (torch.eye(T) + torch.eye(T).roll(1, dims=1)) / 2
    assert one_head(half)["entropy"] == pytest.approx(math.log(2) / math.log(T))


def test_no_punctuation_in_the_sentence_scores_zero():
    tokens = ("[CLS]", "hello", "[SEP]")
    scores = head_scores(torch.full((1, 1, 3, 3), 1 / 3), tokens)
    assert scores.of("punctuation").item() == 0.0


def test_ranking_grid_and_rows_find_the_planted_heads():
    """A 2-layer x 3-head model with a previous-token head at (1, 2) and a [CLS] head at (0, 1)."""
    attentions = torch.full((2, 3, T, T), 1 / T)
    attentions[1, 2] = shifted(-1)
    attentions[0, 1] = to_key(0)
    scores = head_scores(attentions, TOKENS)
    assert scores.values.shape == (len(PATTERNS), 2, 3)
    assert scores.ranked("previous")[0] == (1, 2, 1.0)
    assert scores.ranked("cls")[0] == (0, 1, 1.0)
    assert [(l, h) for l, h, _ in scores.ranked("entropy", descending=False)[:2]] == [(0, 1), (1, 2)]
    assert len(scores.ranked("self")) == 6
    rows = scores.rows()
    assert [(r["layer"], r["head"]) for r in rows] == [(l, h) for l in range(2) for h in range(3)]
    assert set(rows[0]) == {"layer", "head", *PATTERNS}
    assert rows[5]["previous"] == 1.0 and scores.of("previous")[1, 2] == 1.0


def test_the_finder_finds_minilm_s_previous_token_head():
    """On real text, layer 0 head 2 (layer 1, head 3 in the UI) looks at the previous token almost always,
    and this model parks spare attention on [CLS] rather than on [SEP]."""
    run = load_minilm().run("The cat sat on the mat, and then it slept.")
    scores = head_scores(run.attentions, run.tokens)
    assert scores.values.shape == (len(PATTERNS), 6, 12)
    assert (scores.values >= 0).all() and (scores.values <= 1 + 1e-6).all()
    layer, head, best = scores.ranked("previous")[0]
    assert (layer, head) == (0, 2) and best > 0.99
    assert scores.of("cls").mean() > 5 * scores.of("sep").mean()


@pytest.mark.parametrize(
    "token,expected",
    [(".", True), ("!?", True), ("，", True), ("。", True), ("$", True), ("'", True), ("(", True)]
    + [("cat", False), ("[CLS]", False), ("[SEP]", False), ("[UNK]", False), ("##s", False), ("3", False)]
    + [("", False), ("🙂", False)],
)
def test_punctuation_as_bert_splits_it(token, expected):
    assert is_punctuation(token) == expected


@pytest.mark.parametrize("shape,tokens", [((1, 1, 3, 3), TOKENS), ((1, 1, 1, 1), ("[CLS]",))])
def test_mismatched_or_too_short_input_is_refused(shape, tokens):
    with pytest.raises(ValueError):
        head_scores(torch.ones(shape), tokens)
