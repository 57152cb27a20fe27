"""Attention rollout: its properties, and a two-layer case worked out by hand."""

from __future__ import annotations

import torch

from attnlab.pretrained import residual_attention, rollout


def random_attentions(layers: int, heads: int, t: int, seed: int = 0) -> torch.Tensor:
    """(L, H, T, T) row-stochastic maps, as softmax gives them."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(layers, heads, t, t, generator=gen, dtype=torch.float64).softmax(-1)


def test_rows_sum_to_one_after_every_layer():
    result = rollout(random_attentions(6, 12, 9))
    assert result.shape == (6, 9, 9)
    assert torch.allclose(result.sum(-1), torch.ones(6, 9, dtype=torch.float64), atol=1e-12)
    assert (result >= 0).all()


def test_identity_attention_rolls_out_to_the_identity():
    eye = torch.eye(5, dtype=torch.float64).expand(3, 4, 5, 5)
    assert torch.equal(rollout(eye), torch.eye(5, dtype=torch.float64).expand(3, 5, 5))


def test_two_layers_by_hand():
    """Heads averaged, identity added, rows renormalised, then layer 1 applied after layer 0 (on the left)."""
    layer_0 = torch.tensor([[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]], dtype=torch.float64)
    layer_1 = torch.tensor([[[0.0, 1.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]], dtype=torch.float64)
    # layer 0: mean [[.5, .5], [1, 0]]; + I = [[1.5, .5], [1, 1]]; rows / 2 -> [[.75, .25], [.5, .5]]
    # layer 1: mean [[0, 1], [0, 1]];   + I = [[1, 1], [0, 2]];     rows / 2 -> [[.5, .5], [0, 1]]
    a_0 = torch.tensor([[0.75, 0.25], [0.5, 0.5]], dtype=torch.float64)
    a_1 = torch.tensor([[0.5, 0.5], [0.0, 1.0]], dtype=torch.float64)
    result = rollout(torch.stack([layer_0, layer_1]))
    assert torch.allclose(residual_attention(torch.stack([layer_0, layer_1])), torch.stack([a_0, a_1]))
    assert torch.allclose(result[0], a_0)
    # a_1 @ a_0 = [[.5*.75 + .5*.5, .5*.25 + .5*.5], [.5, .5]] = [[.625, .375], [.5, .5]]
    assert torch.allclose(result[1], torch.tensor([[0.625, 0.375], [0.5, 0.5]], dtype=torch.float64))
    assert not torch.allclose(result[1], a_0 @ a_1)  # the order matters


def test_one_layer_is_half_attention_half_residual():
    attentions = random_attentions(1, 3, 4)
    expected = (attentions[0].mean(0) + torch.eye(4, dtype=torch.float64)) / 2
    assert torch.allclose(rollout(attentions)[0], expected, atol=1e-15)
