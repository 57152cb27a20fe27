"""Tokenization, deterministic embeddings (across processes) and sinusoidal positions."""

from __future__ import annotations

import hashlib
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.tokens import MAX_TOKENS, embed, input_matrix, positional_encoding, token_seed, tokenize
from tests.conftest import FRESH_GROUP
from tests.fresh import answer, embedding_digest


@pytest.mark.parametrize(
    "text,expected",
    [
        ("I like you.", ["I", "like", "you", "."]),
        ("Hello, world! How's it going?", ["Hello", ",", "world", "!", "How", "'", "s", "it", "going", "?"]),
        ("我喜欢你", ["我", "喜", "欢", "你"]),
        ("我喜欢你。", ["我", "喜", "欢", "你", "。"]),
        ("注意力机制（attention）", ["注", "意", "力", "机", "制", "（", "attention", "）"]),
        ("我 like 你!", ["我", "like", "你", "!"]),
        ("我\u3000爱你", ["我", "爱", "你"]),  # the ideographic (full-width) space separates, it is no token
        ("Thinking Machines思考机器", ["Thinking", "Machines", "思", "考", "机", "器"]),
        ("<BOS> I like you <EOS>", ["<BOS>", "I", "like", "you", "<EOS>"]),
        ("<BOS>我喜欢你<EOS>", ["<BOS>", "我", "喜", "欢", "你", "<EOS>"]),
        ("d_model 512, 8 heads", ["d_model", "512", ",", "8", "heads"]),
        ("Привет, мир", ["Привет", ",", "мир"]),
        ("한국어 텍스트", ["한국어", "텍스트"]),
    ],
)
def test_tokenize_words_punctuation_and_cjk(text, expected):
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("I ❤ you 😀", ["I", "❤", "you", "😀"]),
        ("I ❤️ you", ["I", "❤️", "you"]),  # heart + variation selector U+FE0F: one token, not two
        ("👍🏽 ok", ["👍🏽", "ok"]),  # skin tone modifier stays on its emoji
        ("👨\u200d👩\u200d👧 family", ["👨\u200d👩\u200d👧", "family"]),  # ZWJ sequence
        ("🇨🇳🇺🇸", ["🇨🇳", "🇺🇸"]),  # flags: pairs of regional indicators
        ("😀😀", ["😀", "😀"]),
    ],
)
def test_tokenize_emoji(text, expected):
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),  # right-to-left: logical order, one token a word
        ("مَرْحَبًا بِكُمْ!", ["مَرْحَبًا", "بِكُمْ", "!"]),  # with harakat (combining marks)
        ("שלום עולם!", ["שלום", "עולם", "!"]),
        ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),  # Devanagari vowel signs and virama are marks
        ("cafe\u0301.", ["cafe\u0301", "."]),  # decomposed accent stays on its letter
        ("か\u3099き", ["か\u3099", "き"]),  # decomposed kana voicing mark; still one kana a token
    ],
)
def test_tokenize_combining_marks_stay_with_their_letter(text, expected):
    assert tokenize(text) == expected


def test_tokenize_html_is_just_text():
    tokens = tokenize("<script>alert(1)</script>")
    # `<script>` has the shape of a <BOS>-style tag and stays whole; the rest is plain symbols
    assert tokens == ["<script>", "alert", "(", "1", ")", "<", "/", "script", ">"]
    assert all(isinstance(t, str) for t in tokens)
    assert tokenize('<img src=x onerror="alert(1)">') == [
        "<",
        "img",
        "src",
        "=",
        "x",
        "onerror",
        "=",
        '"',
        "alert",
        "(",
        "1",
        ")",
        '"',
        ">",
    ]


@pytest.mark.parametrize("text", ["", " ", "   \t\n  ", "\u3000", "\u00a0\u2003"])
def test_whitespace_only_gives_no_tokens(text):
    assert tokenize(text) == []


TRICKY = st.sampled_from(
    list(" \t\n\u00a0\u2003\u3000\u200d\ufe0f\u0301\u064e\U0001f3fd\U0001f1e8<>/_")
    + ["我", "。", "a", "Z", "7", "م", "क", "्", "😀", "<BOS>", "\u3099"]
)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=60) | st.lists(TRICKY, max_size=30).map("".join))
def test_tokenize_keeps_every_visible_character_in_order(text):
    tokens = tokenize(text)
    assert "".join(tokens) == "".join(text.split())
    assert all(tok and not any(ch.isspace() for ch in tok) for tok in tokens)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(whitelist_categories=("Lo",), max_codepoint=0x9FFF), max_size=20))
def test_every_cjk_ideograph_is_its_own_token(text):
    ideographs = [ch for ch in text if "\u4e00" <= ch <= "\u9fff"]
    tokens = tokenize(text)
    for ch in ideographs:
        assert ch in tokens
    assert not any(len(t) > 1 and any("\u4e00" <= c <= "\u9fff" for c in t) for t in tokens)


def test_token_cap_is_64():
    assert MAX_TOKENS == 64


def test_embed_shape_dtype_and_determinism():
    tokens = tokenize("<BOS> I like you <EOS>")
    x = embed(tokens, 8, seed=3)
    assert x.shape == (5, 8) and x.dtype == torch.float64
    assert torch.equal(x, embed(tokens, 8, seed=3))
    assert not torch.equal(x, embed(tokens, 8, seed=4))
    assert embed(tokens, 8, seed=3, dtype=torch.float32).dtype == torch.float32
    assert embed([], 8).shape == (0, 8)


def test_equal_tokens_equal_rows_and_context_does_not_matter():
    tokens = ["the", "cat", "saw", "the", "dog"]
    x = embed(tokens, 16, seed=1)
    assert torch.equal(x[0], x[3])
    assert not torch.equal(x[0], x[1])
    assert len({tuple(r.tolist()) for r in x}) == 4
    # a token's row depends only on (token, seed), not on its neighbours or position
    alone = embed(["dog"], 16, seed=1)
    assert torch.equal(alone[0], x[4])
    # case matters: "The" and "the" are different tokens
    assert not torch.equal(embed(["The"], 16, seed=1), embed(["the"], 16, seed=1))


def test_embed_is_unit_variance():
    x = embed(["apple", "banana", "chair"], 4096, seed=0)
    assert abs(x.mean().item()) < 0.05
    assert abs(x.std().item() - 1) < 0.05


def test_token_seed_is_not_pythons_salted_hash():
    a = token_seed("like", 0)
    assert a == token_seed("like", 0)
    assert a != token_seed("like", 1) and a != token_seed("like ", 0)
    assert 0 <= a < 2**64
    # pinned: the same value on every machine and in every release that keeps the link format
    assert a == int.from_bytes(hashlib.blake2b(b"0\x1flike", digest_size=8).digest(), "little")


@FRESH_GROUP
def test_embeddings_identical_across_processes_with_different_hash_seeds(fresh_answers):
    """This process and a fresh one that hashes strings differently embed the same text to the same bytes."""
    there = answer(fresh_answers, "embeddings")
    assert there["salted"] != hash("salted?")  # the two processes really do hash strings differently
    assert there["digest"] == embedding_digest()


@pytest.mark.parametrize("d_model", [1, 2, 3, 5, 8, 9, 64])
def test_positional_encoding_exact_values(d_model):
    t = 12
    pe = positional_encoding(t, d_model)
    assert pe.shape == (t, d_model) and pe.dtype == torch.float64
    for p in range(t):
        for j in range(d_model):
            two_i = j - j % 2
            angle = p / 10000 ** (two_i / d_model)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert pe[p, j].item() == pytest.approx(expected, abs=1e-12), (p, j)  # float64 sin, cos: O(1) values


def test_positional_encoding_known_rows():
    pe = positional_encoding(3, 4)
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    row1 = [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]  # 10000^(2/4) = 100
    assert pe[1].tolist() == pytest.approx(row1, abs=1e-15)  # float64 sin and cos of small angles: O(1), a few ulps
    assert positional_encoding(3, 5, dtype=torch.float32).dtype == torch.float32
    assert positional_encoding(0, 4).shape == (0, 4)


def test_input_matrix_adds_positions_only_when_asked():
    tokens = tokenize("the cat the")
    x = embed(tokens, 6, seed=2)
    assert torch.equal(input_matrix(tokens, 6, 2, positions=False), x)
    with_pe = input_matrix(tokens, 6, 2, positions=True)
    assert torch.equal(with_pe, x + positional_encoding(3, 6))
    assert not torch.equal(with_pe[0], with_pe[2])  # same token, different position
