"""Every question graded right and wrong against matrices the test computes itself (plain torch, not attnlab's path)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.attention import attention_steps
from attnlab.classroom.answers import AnswerError
from attnlab.classroom.build import QUESTION_STEPS, questions_for_step
from attnlab.classroom.questions import Grade, Question, RowSumQuestion, spread_change
from attnlab.multihead import MultiHeadWeights
from attnlab.pipeline import LabConfig, run_lab
from attnlab.stages import N_STEPS
from attnlab.tokens import input_matrix, tokenize
from attnlab.ui.app.i18n import LANGS, catalog
from tests.conftest import FRESH_GROUP
from tests.fresh import CLASSROOM, answer

TEXTS = [
    "<BOS> I like you <EOS>",
    "the cat sat on the mat",  # repeated tokens: equal keys tie when positions are off
    "我爱北京天安门",
    "one two three four five six seven eight nine ten eleven",  # T > 8: the mask question asks for a count
]
STATES = [
    LabConfig(text=text, d_model=d_model, heads=heads, causal=causal, seed=seed, positions=positions)
    for text in TEXTS
    for causal in (False, True)
    for seed, heads, d_model, positions in ((0, 1, 8, False), (7, 2, 8, True), (123, 4, 16, False))
]


def ids(config: LabConfig) -> str:
    return f"{config.text[:12]}|causal={config.causal}|seed={config.seed}|H={config.heads}|pe={config.positions}"


def reference(config: LabConfig, head: int) -> dict:
    """Q, the mask, scores and softmax weights of one head, by plain torch (the seeds' recipe)."""
    tokens = tokenize(config.text)
    x = input_matrix(tokens, config.d_model, config.seed, config.positions)  # (T, D)
    w = MultiHeadWeights.random(config.d_model, seed=config.seed)
    d_k = config.d_model // config.heads
    cols = slice(head * d_k, (head + 1) * d_k)
    q, k, v = (x @ w.w_q)[:, cols], (x @ w.w_k)[:, cols], (x @ w.w_v)[:, cols]  # (T, d_k)
    t = len(tokens)
    mask = torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1) if config.causal else torch.zeros(t, t)
    masked = q @ k.T / math.sqrt(d_k) + mask
    weights = torch.softmax(masked, dim=-1)
    sdpa = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=config.causal)[0]
    assert torch.allclose(weights @ v, sdpa, atol=1e-12)  # the reference itself agrees with PyTorch's kernel
    return dict(
        tokens=tokens, q_shape=(t, config.d_model), blocked=torch.isneginf(mask), masked=masked, weights=weights
    )


def the(number: int, config: LabConfig, head: int = 0, qid: str | None = None) -> Question:
    """The question `qid` (or the only one) of step `number`."""
    made = questions_for_step(number, config, run_lab(config), head=head)
    return next(q for q in made if qid is None or q.qid == qid)


def explained(grade: Grade) -> Grade:
    """The grade, after checking its explanation formats in both languages."""
    for lang in LANGS:
        assert catalog(lang)[grade.why].format(**grade.fields).strip()
    return grade


def heads_of(config: LabConfig) -> list[int]:
    return sorted({0, config.heads - 1})


@pytest.mark.parametrize("config", STATES, ids=ids)
def test_shape_of_q(config):
    t, d_model = reference(config, 0)["q_shape"]
    question = the(2, config)
    for raw in (
        f"({t}, {d_model})",
        f"{t}x{d_model}",
        f"（{t}，{d_model}）".translate(str.maketrans("0123456789", "０１２３４５６７８９")),
    ):
        grade = explained(question.grade(raw))
        assert grade.correct and grade.why.endswith(".right") and grade.expected == (t, d_model)
    assert explained(question.grade(f"1, {t}, {d_model}")).correct
    assert explained(question.grade(f"{d_model} {t}")).why.endswith("wrong_transposed")
    wrong = explained(question.grade(f"{t + 1} x {d_model}"))
    assert not wrong.correct and wrong.given == (t + 1, d_model) and wrong.fields["t"] == str(t)


@pytest.mark.parametrize("config", STATES, ids=ids)
def test_key_with_the_most_weight(config):
    for head in heads_of(config):
        question = the(8, config, head, "argmax")
        ref = reference(config, head)
        tokens, row = ref["tokens"], question.query
        weights, masked = ref["weights"][row], ref["masked"][row]
        top = {j for j in range(len(tokens)) if weights[j] >= weights.max() * (1 - 1e-9)}
        assert question.tokens == tuple(tokens) and (~ref["blocked"][row]).sum() >= 2
        for j in top:
            by_position, by_text = explained(question.grade(str(j + 1))), explained(question.grade(tokens[j]))
            assert by_position.correct and by_text.correct and by_position.expected == frozenset(top)
            assert by_position.fields["weight"] == f"{weights[j]:.2f}"
        top_texts = {tokens[j] for j in top}
        for j in set(range(len(tokens))) - top:
            grade = explained(question.grade(str(j + 1)))
            assert not grade.correct and grade.fields["given_weight"] == f"{weights[j]:.2f}"
            assert grade.why.endswith("wrong_blocked") == bool(torch.isneginf(masked[j]))
            if tokens[j] not in top_texts:
                assert not question.grade(tokens[j]).correct


@pytest.mark.parametrize("config", STATES, ids=ids)
def test_cells_the_mask_blocks(config):
    for head in heads_of(config):
        question = the(7, config, head)
        blocked = reference(config, head)["blocked"]
        cells = {(i, j) for i, j in zip(*np.nonzero(blocked.numpy()), strict=True)}
        t, n = blocked.shape[0], len(cells)
        assert question.t == t and question.form == ("cells" if t <= 8 else "count")
        if question.form == "count":
            assert explained(question.grade(str(n))).correct
            assert explained(question.grade("none")).correct == (n == 0)
            assert not explained(question.grade(str(n + 3))).correct
            continue
        typed = " ".join(f"({i + 1},{j + 1})" for i, j in sorted(cells)) or "none"
        assert explained(question.grade(typed)).correct and explained(question.grade_cells(cells)).correct
        assert explained(question.grade("无")).correct == (n == 0)
        if n:
            assert explained(question.grade_cells({(j, i) for i, j in cells})).why.endswith("wrong_transposed")
            assert explained(question.grade_cells(cells | {(0, 0)})).why.endswith("wrong_diagonal")
            short = explained(question.grade_cells(cells - {min(cells)}))
            assert not short.correct and short.fields["missed"] == "1" and short.fields["extra"] == "0"
        else:
            assert explained(question.grade("1,2")).why.endswith("wrong_none")


@pytest.mark.parametrize("config", STATES, ids=ids)
def test_what_each_row_adds_up_to(config):
    for head in heads_of(config):
        question = the(8, config, head, "row_sum")
        sums = reference(config, head)["weights"].sum(dim=-1)
        assert torch.allclose(torch.tensor(question.sums), sums, atol=1e-12)
        t = len(sums)
        for raw in ("1", "１", "1.0", "0.999", ", ".join(["1"] * t), "、".join(f"{s:.3f}" for s in sums.tolist())):
            assert explained(question.grade(raw)).correct, raw
        for raw in ("0", str(t), "0.5", ", ".join(["0.5"] * t)):
            assert not explained(question.grade(raw)).correct, raw
        with pytest.raises(AnswerError):
            question.grade("1, 1")


def test_a_row_that_sees_no_key_adds_up_to_zero():
    t = 4
    see = torch.ones(t, t, dtype=torch.bool)
    see[2] = False  # query 3 may see nothing
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(t, 3, generator=gen, dtype=torch.float64) for _ in range(3))
    steps = attention_steps(q, k, v, attn_mask=see)
    question = RowSumQuestion("u", 0, ("a", "b", "c", "d"), 0, steps.weights.numpy(), steps.empty_rows.numpy())
    expected = [0.0 if not see[i].any() else 1.0 for i in range(t)]
    assert np.allclose(question.sums, expected)
    right = explained(question.grade("1"))
    assert right.correct and right.why.endswith("right_empty") and right.fields["empty"] == "1"
    assert explained(question.grade("1, 1, 0, 1")).correct
    assert not explained(question.grade("1, 1, 1, 1")).correct


def mean_top_weight(masked: torch.Tensor) -> float:
    """Mean largest softmax weight over rows that see at least two keys, by torch.softmax."""
    rows = (~torch.isneginf(masked)).sum(-1) >= 2
    return float(torch.softmax(masked[rows], dim=-1).amax(-1).mean()) if rows.any() else 1.0


@pytest.mark.parametrize("config", STATES[::3], ids=ids)
def test_softmax_without_the_scale_at_large_d_k(config):
    big = 512
    tokens = tokenize(config.text)
    x = input_matrix(tokens, big, config.seed, config.positions)
    w = MultiHeadWeights.random(big, seed=config.seed)
    scores = (x @ w.w_q) @ (x @ w.w_k).T
    t = len(tokens)
    mask = torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1) if config.causal else torch.zeros(t, t)
    scaled, unscaled = mean_top_weight(scores / math.sqrt(big) + mask), mean_top_weight(scores + mask)
    truth = "peaked" if unscaled > scaled + 1e-9 else "flatter" if unscaled < scaled - 1e-9 else "unchanged"
    question = the(6, config)
    right = explained(question.grade(truth))
    assert (
        right.correct
        and right.fields["big_scaled"] == f"{scaled:.2f}"
        and right.fields["big_unscaled"] == f"{unscaled:.2f}"
    )
    for other in {"peaked", "flatter", "unchanged"} - {truth}:
        assert not explained(question.grade(other)).correct
    assert truth == "peaked"  # a sentence of several tokens at d_k = 512 saturates without the scale


def test_one_token_leaves_softmax_unchanged_either_way():
    question = the(6, LabConfig(text="hello"))
    assert question.expected == "unchanged" and explained(question.grade("C")).correct


def test_spread_change_reads_the_top_weight():
    assert spread_change(0.4, 0.9) == "peaked" and spread_change(0.9, 0.4) == "flatter"
    assert spread_change(0.5, 0.5) == "unchanged"


@FRESH_GROUP
def test_the_same_link_gives_the_same_questions_in_another_process(fresh_answers):
    """A fresh interpreter that hashes strings differently asks the same questions, ids and all, for one link."""
    config = LabConfig(**CLASSROOM)
    assert config in STATES  # one of the states every other test here grades
    here = [q.uid for n in QUESTION_STEPS for q in questions_for_step(n, config, run_lab(config))]
    assert answer(fresh_answers, "classroom_questions") == here
    assert all(uid.endswith(f"-q{the(8, config).query}") for uid in here)


def test_questions_live_on_steps_2_6_7_8_and_nowhere_else():
    config = STATES[1]
    result = run_lab(config)
    asked = {n: [q.qid for q in questions_for_step(n, config, result)] for n in range(1, N_STEPS + 1)}
    assert asked == {n: list(QUESTION_STEPS.get(n, ())) for n in range(1, N_STEPS + 1)}
    assert QUESTION_STEPS == {2: ("q_shape",), 6: ("scaling",), 7: ("mask",), 8: ("argmax", "row_sum")}


def test_every_prompt_and_hint_formats_in_both_languages():
    for config in (STATES[1], STATES[-1]):
        for n in QUESTION_STEPS:
            for question in questions_for_step(n, config, run_lab(config)):
                for lang in LANGS:
                    for key in (question.prompt_key, question.hint_key):
                        assert catalog(lang)[key].format(**question.prompt_fields).strip()


def test_a_chosen_query_row_and_head_are_honoured():
    config = STATES[4]
    result = run_lab(config)
    argmax = questions_for_step(8, config, result, head=1, query=0)[0]
    assert argmax.query == 0 and argmax.head == 1 and argmax.prompt_fields["head"] == "2"
    assert np.array_equal(argmax.weights, result.steps.heads.weights[1, 0].numpy())
    with pytest.raises(ValueError):
        questions_for_step(8, config, result, head=config.heads)


def test_no_questions_for_an_empty_sentence():
    config = LabConfig(text="   ")
    assert questions_for_step(2, config, run_lab(config)) == ()
