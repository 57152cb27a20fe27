"""The decoders' hook points: with no hook (or hooks that change nothing) a run is the forward pass as it was
before the hooks existed, recomputed here on the same shipped weights; ablation, recording and replacing go
through the same points."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch

from attnlab.attention import AttentionSteps, attention_steps
from attnlab.trained import load
from attnlab.trained.decoder import Decoder
from attnlab.trained.model import POINTS, AttnOnly, hook_name
from tests.near import assert_near

SEQS = {
    "k3x": "k 3 x m q 7 k 3 x m q 7 k 3 x m q 7",
    "abcde": " ".join("abcde" * 8),
    "z": "z",
}
RUNS = [  # (recipe, checkpoint (None: the last), sequence, ablated (layer, head) pairs)
    ("induction-2l", None, "k3x", ()),
    ("induction-2l", None, "k3x", ((0, 1),)),
    ("induction-2l", None, "abcde", ()),
    ("induction-2l", None, "abcde", ((0, 1),)),
    ("induction-2l", None, "z", ()),
    ("induction-2l", 300, "k3x", ()),
    ("induction-2l", 300, "abcde", ((0, 1),)),
    ("induction-1l", None, "k3x", ()),
    ("induction-1l", None, "k3x", ((0, 1),)),
    ("induction-1l", None, "abcde", ()),
    ("induction-1l", 300, "z", ((0, 1),)),
]


@cache
def decoder(name: str, step: int | None = None) -> Decoder:
    """One shipped checkpoint, loaded once for the module."""
    return load(name, step)


@pytest.fixture(scope="module")
def two() -> Decoder:
    return decoder("induction-2l")


# The forward pass as it was before the hook points (commit f451ae4's AttnOnly), as plain functions. The hooked
# code runs the same operations in the same order when no hook is set, so the two are compared exactly (on any
# CPU: both run here, with the same kernels); an ablated head was multiplied by 0 then, and is zeros now, which
# is the same number (a -0.0 for a negative output compares equal to 0.0).
def plain_layer(m: AttnOnly, x: torch.Tensor, layer: int) -> AttentionSteps:
    """One layer's attention stages for residual x (B, T, D), heads split as (B, H, T, d_k)."""
    b, t, d = x.shape
    h = m.cfg.n_heads
    qkv = (x @ m.w_qkv[layer]).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)  # (3, B, H, T, d_k)
    return attention_steps(qkv[0], qkv[1], qkv[2], is_causal=True)


def plain_concat(m: AttnOnly, s: AttentionSteps, layer: int, ablate) -> torch.Tensor:
    """One layer's head outputs side by side (B, T, D), its ablated heads zeroed: what W_O reads."""
    b, _, t, _ = s.output.shape
    out = s.output  # (B, H, T, d_k)
    off = [hd for (ly, hd) in ablate if ly == layer]
    if off:
        keep = torch.ones(m.cfg.n_heads, dtype=out.dtype)
        keep[off] = 0.0
        out = out * keep[None, :, None, None]
    return out.transpose(1, 2).reshape(b, t, -1)


def plain_residual(m: AttnOnly, ids: torch.Tensor, upto: int, ablate) -> tuple[torch.Tensor, list[AttentionSteps]]:
    """The residual stream entering layer `upto` (B, T, D) and the attention stages of the layers before it."""
    x = m.embed[ids] + m.pos[: ids.size(1)]  # (B, T, D)
    steps = []
    for layer in range(upto):
        s = plain_layer(m, x, layer)
        x = x + plain_concat(m, s, layer, ablate) @ m.w_o[layer]
        steps.append(s)
    return x, steps


@pytest.mark.parametrize("key", RUNS, ids=lambda k: "-".join(map(str, k)))
def test_a_run_is_the_forward_pass_before_hooks(key):
    """Every layer's weights and the next-symbol probabilities, equal to the plain pass's bit for bit."""
    name, step, seq, ablate = key
    d = decoder(name, step)
    r = d.run(SEQS[seq], ablate=ablate)
    with torch.no_grad():
        x, steps = plain_residual(d.model, r.ids[None], d.n_layers, ablate)
        probs = torch.softmax((x @ d.model.unembed)[0], -1)  # (T, V)
    np.testing.assert_array_equal(r.attentions, torch.stack([s.weights[0] for s in steps]).numpy())
    np.testing.assert_array_equal(r.probs, probs.numpy())


@pytest.mark.parametrize("ablate", [(), ((0, 1),)], ids=str)
def test_layer_steps_are_the_stage_table_before_hooks(ablate):
    """The stage table of layer 2 (the stream entering it, Q, K, V, every head stage, concat, output), exactly."""
    d = decoder("induction-2l")
    got = d.layer_steps(d.run(SEQS["k3x"], ablate=ablate), 1)
    m = d.model
    with torch.no_grad():
        x, _ = plain_residual(m, d.ids(SEQS["k3x"])[None], 1, ablate)  # (1, T, D)
        s = plain_layer(m, x, 1)
        concat = plain_concat(m, s, 1, ablate)  # (1, T, D)
        q, k, v = (x @ m.w_qkv[1])[0].chunk(3, dim=-1)
        output = (concat @ m.w_o[1])[0]
    for want, have in [(x[0], got.x_q), (q, got.q), (k, got.k), (v, got.v), (concat[0], got.concat)]:
        assert torch.equal(have, want)
    assert torch.equal(got.output, output)
    for f in AttentionSteps.__dataclass_fields__:
        if f != "scale":
            assert torch.equal(getattr(got.heads, f), getattr(s, f)[0]), f


def test_identity_hooks_on_every_point_change_nothing(two):
    """Hooks that return what they get: the plain pass, exactly on the outputs, within REORDERED on the inputs."""
    ids = two.ids(SEQS["k3x"])[None]
    seen = []

    def keep(x: torch.Tensor) -> torch.Tensor:
        seen.append(tuple(x.shape))
        return x

    with torch.no_grad():
        x, _ = plain_residual(two.model, ids, two.n_layers, ())
        plain = x @ two.model.unembed  # (1, T, V)
    outs = [hook_name(ly, h, "out") for ly in range(2) for h in range(two.n_heads)]
    names = [hook_name(ly, h, p) for ly in range(2) for h in range(two.n_heads) for p in POINTS]
    on_outs, _, _ = two.forward(SEQS["k3x"], hooks=dict.fromkeys(outs, lambda x: x))
    assert torch.equal(on_outs, plain)  # the same head outputs, stacked again: the same operations
    hooked, _, _ = two.forward(SEQS["k3x"], hooks=dict.fromkeys(names, keep))
    # a hooked q, k or v input is projected by its head's own columns of W_QKV, a narrower matmul than the plain
    # pass's, which may sum the 64 products of each entry in another order: float32's pair, on logits up to ~15
    assert_near(hooked, plain)
    t, d, dk = 19, two.model.cfg.d_model, two.model.cfg.d_model // two.n_heads
    assert len(seen) == len(names) and set(seen) == {(1, t, d), (1, t, dk)}


def test_ablation_is_a_hook_that_zeroes_one_heads_output(two):
    zero = {hook_name(0, 1, "out"): torch.zeros_like}
    via_hook, _, _ = two.forward(SEQS["k3x"], hooks=zero)
    via_ablate, _, _ = two.forward(SEQS["k3x"], ablate=((0, 1),))
    np.testing.assert_array_equal(via_hook.numpy(), via_ablate.numpy())


def test_an_input_hook_reaches_only_its_head_and_its_projection(two):
    """Shifting head 2.1's key input changes head 2.1's weights and no other head's, nor layer 1."""
    shift = {hook_name(1, 0, "k"): lambda x: x + 0.5}
    _, plain, _ = two.forward(SEQS["k3x"])
    _, hooked, _ = two.forward(SEQS["k3x"], hooks=shift)
    np.testing.assert_array_equal(plain[0].weights.numpy(), hooked[0].weights.numpy())
    np.testing.assert_array_equal(plain[1].weights[:, 1:].numpy(), hooked[1].weights[:, 1:].numpy())
    np.testing.assert_array_equal(plain[1].q.numpy(), hooked[1].q.numpy())
    np.testing.assert_array_equal(plain[1].v.numpy(), hooked[1].v.numpy())
    assert not torch.equal(plain[1].weights[:, 0], hooked[1].weights[:, 0])


def test_an_unknown_hook_point_is_refused(two):
    with pytest.raises(ValueError, match="hook point"):
        two.forward(SEQS["z"], hooks={"blocks.5.0.q": lambda x: x})
    with pytest.raises(ValueError, match="hook point"):
        two.forward(SEQS["z"], hooks={"nonsense": lambda x: x})
