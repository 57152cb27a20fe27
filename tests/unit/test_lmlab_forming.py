"""The Language model page's lens grid, pushes and branches (attnlab.lmlab.forming, .branching) against attnlab.lm's
own lens, attribution and generation, computed here in the same run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32
from attnlab.lm import trace
from attnlab.lmlab import branching, forming
from tests.near import assert_near
from tests.unit.test_lmlab import tiny

TEXT = "the cat sat, the cat sat\n宫花"


@pytest.fixture(scope="module")
def lm():
    return tiny(seed=2)


@pytest.mark.parametrize("chunk", [3 * 39, 2**22])  # three positions' logits at a time, or every row at once
def test_the_lens_grid_is_the_whole_lens_read_a_chunk_at_a_time(lm, monkeypatch, chunk):
    monkeypatch.setattr(forming, "CHUNK", chunk)
    ids = tuple(lm.encode(TEXT))
    grid = forming.lens_grid(lm, trace(lm, ids), ids)
    whole = torch.softmax(lm.lens(ids).double(), -1)  # (L + 1, T, V)
    assert np.array_equal(grid.top, whole.argmax(-1).numpy())
    assert_near(grid.prob, whole.max(-1).values.numpy(), (TOL_FLOAT32, RTOL_FLOAT32))  # float32 logits
    nxt = torch.tensor(ids[1:])
    want = whole[:, :-1].gather(-1, nxt[None, :, None].expand(whole.size(0), -1, 1))[..., 0]  # (L + 1, T - 1)
    assert_near(grid.actual, want.numpy(), (TOL_FLOAT32, RTOL_FLOAT32))
    ranks = (whole[:, :-1] > want[..., None]).sum(-1) + 1
    assert np.array_equal(grid.rank, ranks.numpy())


def test_formed_names_the_first_layer_from_which_the_next_token_stays_first():
    rank = np.array([[3, 1, 1, 2], [1, 1, 2, 1], [1, 1, 3, 1]])  # rows: embedding, layer 1, output
    grid = forming.LensGrid(np.zeros((3, 5), int), np.zeros((3, 5)), rank, np.zeros((3, 4)))
    assert [grid.formed(i) for i in range(5)] == [1, 0, None, 1, None]


def test_the_pushes_sum_to_the_logit_and_the_strongest_keep_the_sum(lm):
    ids = tuple(lm.encode(TEXT))
    tr = trace(lm, ids)
    rows, logit = forming.pushes(lm, tr, 7, 4)
    assert [(r.kind, r.layer, r.head) for r in rows[:2]] == [("embed", None, None), ("head", 0, 0)]
    assert rows[lm.n_heads + 1].kind == "mlp" and len(rows) == 1 + lm.n_layers * (lm.n_heads + 1)
    assert math.isclose(sum(r.value for r in rows), logit, abs_tol=1e-4)
    assert math.isclose(logit, float(lm.forward(torch.tensor([list(ids)])).logits[0, 7, 4]), abs_tol=1e-5)
    few = forming.strongest(rows, 3)
    assert len(few) == 4 and few[-1].kind == "rest" and few[-1].count == len(rows) - 3
    assert math.isclose(sum(r.value for r in few), sum(r.value for r in rows), abs_tol=1e-12)
    assert min(abs(r.value) for r in few[:-1]) >= max(abs(r.value) for r in rows if r not in few)
    assert forming.strongest(rows, len(rows)) == rows


def test_where_rows_part_is_marked_in_both_rows():
    marks = branching.parted([[1, 2, 3, 4], [1, 2, 5, 4], [1, 2, 3, 7]])
    assert marks.tolist() == [[0, 0, 1, 1], [0, 0, 1, 0], [0, 0, 1, 1]]
    assert not branching.parted([[1, 2], [1, 2]]).any()


def test_a_branch_is_three_generations_of_the_text_and_its_forced_start(lm):
    got = branching.branch(lm, "the cat", " s", (0.0, 0.8, 1.5), 4, None, 0.9)
    assert got.n == min(branching.BRANCH_CHARS, lm.max_len - len(lm.encode("the cat s")))
    for row, temperature in zip(got.rows, got.temperatures, strict=True):
        assert row.text == lm.generate("the cat s", got.n, temperature, 4, top_p=0.9).text
    assert np.array_equal(got.parted, branching.parted([[s.token_id for s in r.steps] for r in got.rows]))
    alts = branching.alternatives(lm, "the cat s")
    probs = torch.softmax(lm.forward(torch.tensor([lm.encode("the cat s")])).logits[0, -1].double(), -1)
    probs[lm.vocab.banned()] = 0  # never <bos> or <unk>: the rest renormalised
    want = torch.topk(probs / probs.sum(), 5)
    assert [a[0] for a in alts] == want.indices.tolist() and [a[1] for a in alts] == [lm.token(i) for i, *_ in alts]
    assert_near(np.array([a[2] for a in alts]), want.values.numpy())  # float64 from the same logits
    assert alts[0][0] == got.rows[0].steps[0].argmax  # the greedy row's first choice
    with pytest.raises(ValueError, match="no room"):
        branching.branch(lm, "a" * (lm.max_len - 1), "", (0.0,), 0, None, None)
