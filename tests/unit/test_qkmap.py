"""The query-key map's math: the normalisation keeps every weight, the PCA is a PCA, the agreement is measured right."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.qkmap import agreement, normalised, project, qk_map, spearman, visible_keys
from tests.conftest import REFERENCE_GROUP


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row softmax in float64."""
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_normalising_leaves_every_attention_weight_as_it_was(t_q, t_k, d, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(t_q, d)) * 3, rng.normal(size=(t_k, d)) + 2
    nq, nk = normalised(q, k)
    assert np.allclose(softmax_rows(nq @ nk.T), softmax_rows(q @ k.T), atol=1e-9)
    mq, mk = nq.mean(axis=0), nk.mean(axis=0)  # one centre before the scaling, so the same direction after it
    assert np.isclose(mq @ mk, np.linalg.norm(mq) * np.linalg.norm(mk))
    assert np.isclose(np.linalg.norm(nq, axis=1).mean(), np.linalg.norm(nk, axis=1).mean())


def test_the_projection_is_the_first_two_principal_components():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(40, 6)) * np.array([5.0, 3.0, 1.0, 0.5, 0.2, 0.1])
    xy, explained = project(points)
    centred = points - points.mean(axis=0)
    cov = np.cov(centred.T, bias=True)
    values = np.sort(np.linalg.eigvalsh(cov))[::-1]
    assert np.allclose(xy.var(axis=0), values[:2])  # each axis keeps its eigenvalue's variance
    assert np.allclose(explained, values[:2] / values.sum())
    assert abs(np.corrcoef(xy[:, 0], xy[:, 1])[0, 1]) < 1e-9  # the axes are uncorrelated


def test_a_one_dimensional_head_still_gets_a_flat_second_axis():
    xy, explained = project(np.arange(5.0)[:, None])
    assert xy.shape == (5, 2) and np.all(xy[:, 1] == 0) and explained == (1.0, 0.0)


@REFERENCE_GROUP  # its cases on the worker that imports scipy.stats anyway (1.5 s)
@pytest.mark.parametrize("n", [2, 7, 30])
def test_spearman_matches_scipy_with_ties(n):
    from scipy.stats import spearmanr

    rng = np.random.default_rng(n)
    a, b = rng.integers(0, 4, n).astype(float), rng.normal(size=n)
    expected = spearmanr(a, b).statistic
    assert spearman(a, b) == pytest.approx(0.0 if np.isnan(expected) else expected)


def test_spearman_of_nothing_to_rank_is_zero():
    assert spearman(np.ones(4), np.arange(4.0)) == 0.0 and spearman(np.ones(1), np.ones(1)) == 0.0


def test_keys_of_equal_length_make_nearest_exactly_most_attended():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(6, 4))
    q -= q.mean(axis=0)
    u = rng.normal(size=(4, 4))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    k = np.vstack([u, -u])  # equal lengths and the queries' centre (0): distance ranks are exactly score ranks
    weights = softmax_rows(q @ k.T)
    qk = qk_map(q, k)
    for i in range(6):
        found = agreement(qk, weights, i, n=3)
        assert found.spearman == pytest.approx(1.0)
        assert found.overlap == 3 and list(found.nearest) == list(found.top)


def test_a_causal_query_is_judged_only_on_the_keys_it_sees():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    scores = np.where(np.tril(np.ones((5, 5), bool)), q @ k.T, -np.inf)
    weights = softmax_rows(scores)
    found = agreement(qk_map(q, k), weights, 1, causal=True, n=3)
    assert set(found.nearest) <= {0, 1} and set(found.top) <= {0, 1} and len(found.top) == 2
    assert list(visible_keys(5, 1, True)) == [0, 1] and list(visible_keys(3, 4, False)) == [0, 1, 2]


def test_a_real_minilm_head_attends_where_its_queries_are_near():
    from attnlab.pretrained import load_minilm

    model = load_minilm()
    run = model.run("The animal didn't cross the street because it was too tired.")
    heads = model.layer_steps(run, 2).attention.heads
    rhos = []
    for h in range(model.n_heads):
        qk = qk_map(heads.q[h].numpy(), heads.k[h].numpy())
        w = run.attentions[2, h].numpy()
        rhos += [agreement(qk, w, i).spearman for i in range(run.n_tokens)]
    assert np.median(rhos) > 0.5  # nearness in the normalised space tracks attention on a trained model
    assert torch.allclose(heads.weights, run.attentions[2])
