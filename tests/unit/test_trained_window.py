"""Generation with a window cache (contract 14) against the full decoder run under attnlab.masks' window rule."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.masks import build
from attnlab.trained import Decoder, generate, load
from tests.near import assert_near

PROMPT = "k 3 x m q 7 k 3 x m q 7 k 3".split()  # period 6


@pytest.fixture(scope="module")
def two() -> Decoder:
    return load("induction-2l")


@torch.no_grad()
def masked_run(decoder: Decoder, symbols: list[str], mask: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """The decoder's whole forward pass written again here, every head through SDPA under `mask`: probs (T, V) and
    attention weights (L, H, T, T). Independent of attnlab's cache and of its attention code."""
    m = decoder.model
    ids = decoder.ids(symbols)
    t, d, h = len(ids), m.cfg.d_model, m.cfg.n_heads
    x = m.embed[ids] + m.pos[:t]  # (T, D)
    weights = []
    for layer in range(m.cfg.n_layers):
        q, k, v = (x @ m.w_qkv[layer]).view(t, 3, h, d // h).permute(1, 2, 0, 3)  # (H, T, d_k) each
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        scores = (q @ k.transpose(-1, -2) / (d // h) ** 0.5).masked_fill(~mask, float("-inf"))
        weights.append(scores.softmax(-1))
        x = x + out.transpose(0, 1).reshape(t, d) @ m.w_o[layer]
    return (x @ m.unembed).softmax(-1).numpy(), torch.stack(weights).numpy()


@pytest.mark.parametrize(("window", "sinks"), [(4, 0), (4, 1), (3, 2), (8, 1), (1, 0)])
def test_each_step_is_the_full_run_under_the_window_rule_and_holds_only_the_cached_tokens(two, window, sinks):
    steps = generate(two, PROMPT, 12, window=window, sinks=sinks)
    made = [s.symbol for s in steps]
    mask = build("sinks" if sinks else "window", len(PROMPT) + 12, window=window, sinks=sinks)
    probs, weights = masked_run(two, PROMPT + made[:-1], mask)
    for i, step in enumerate(steps):
        newest = len(PROMPT) + i  # the row of the token this step fed (the start marker is row 0)
        expected = [p for p in range(newest + 1) if p < sinks or p > newest - window]
        assert list(step.positions) == expected
        assert len(step.positions) <= sinks + window
        assert step.keys.shape[2] == step.values.shape[2] == step.weights.shape[2] == len(expected)
        assert_near(step.probs, probs[newest])
        assert_near(step.weights, weights[:, :, newest, expected])
        assert_near(step.weights.sum(-1), 1.0)  # nothing it attended to was evicted
        assert step.symbol == two.vocab[int(np.argmax(probs[newest]))]


def test_a_window_as_long_as_the_sequence_is_contract_12s_generate():
    for name in ("induction-2l", "induction-1l"):
        model = load(name)
        plain = generate(model, PROMPT, 10)
        windowed = generate(model, PROMPT, 10, window=len(PROMPT) + 11, sinks=2)
        assert [s.symbol for s in windowed] == [s.symbol for s in plain]
        for a, b in zip(plain, windowed, strict=True):
            assert_near(b.probs, a.probs)
            assert_near(b.weights, a.weights)
            assert_near(b.keys, a.keys)
            assert list(a.positions) == list(b.positions) == list(range(a.keys.shape[2]))


def test_a_window_shorter_than_the_period_loses_the_copy_and_the_whole_sequence_keeps_it(two):
    truth = [PROMPT[(len(PROMPT) + j) % 6] for j in range(12)]  # the prompt's period-6 pattern, continued

    def right(window):
        return sum(s.symbol == want for s, want in zip(generate(two, PROMPT, 12, window=window), truth, strict=True))

    assert right(None) == right(len(PROMPT) + 12) == 12
    assert right(4) < 12 / 2  # the earlier occurrence is out of the cache: nothing to copy from


def test_bad_windows_and_sinks_raise_naming_them(two):
    for window in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="window"):
            generate(two, PROMPT, 2, window=window)
    with pytest.raises(ValueError, match="sinks"):
        generate(two, PROMPT, 2, window=4, sinks=-1)
    assert generate(two, PROMPT, 0, window=3) == []
