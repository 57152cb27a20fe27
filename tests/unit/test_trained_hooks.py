"""The decoders' hook points: the shipped checkpoints' outputs are byte-identical to the code before hooks, and
ablation, recording and replacing go through the same points."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from attnlab.trained import load
from attnlab.trained.model import POINTS, hook_name

SEQS = {
    "k3x": "k 3 x m q 7 k 3 x m q 7 k 3 x m q 7",
    "abcde": " ".join("abcde" * 8),
    "z": "z",
}
# sha256 of run(...).attentions.tobytes() + run(...).probs.tobytes(), computed with the forward pass as it was
# before the hook points existed (commit f451ae4). A float32 digest depends on the CPU's kernels; these were
# taken on x86-64 (AMD EPYC), with 1 and with 2 threads alike.
BEFORE = {
    ("induction-2l", None, "k3x", ()): "5cdd92c08e1b98fd672d24918b2b76d1eb3263844c22ec929b6576286cd074a0",
    ("induction-2l", None, "k3x", ((0, 1),)): "c6de813bcb5c84cf08d84ad4a31c94f361543c21282e13674852edb69e5313a7",
    ("induction-2l", None, "abcde", ()): "a3be7c8f279a66ee9068dfe4b359c5793a26fb00091cbf4d2c5159ca718cc14e",
    ("induction-2l", None, "abcde", ((0, 1),)): "4c9e5e6506ef0bd41b357204479b02b82a902256b7773c076f4d7d83723ed6e8",
    ("induction-2l", None, "z", ()): "2e7c897a683b45760f0f4fe35cf32d02c7b79e87f34ad3725d72ae417339e70d",
    ("induction-2l", 300, "k3x", ()): "b26b56ee87477b9cccc8a6ce3dafe07554f95553194978aad5cc15faff6d9f7e",
    ("induction-2l", 300, "abcde", ((0, 1),)): "b1ba6ff750c0c5b09d476bee23f5ef87059bfcde8066ef763902d0bfe1d30098",
    ("induction-1l", None, "k3x", ()): "408554216b675ef5dfe47c4ba22055ba09543d2a1661081c667edb49ef48fb07",
    ("induction-1l", None, "k3x", ((0, 1),)): "b36eac0900d1d439488870ffaba7ec6d1069d6221d0a2b24d845e24db9fbd61a",
    ("induction-1l", None, "abcde", ()): "7e4bf0eae2a6eadfbd3922cb630832c92db1de0a78c4a2b323c28fb797281abf",
    ("induction-1l", 300, "z", ((0, 1),)): "136a66fedfb292591a7bf90df84de3f4f13dfd8f933bd01f3e72008bdb18fac5",
}
# sha256 of layer_steps(run, 1)'s x, q, k, v, weights, head outputs, concat and output (the stage table's input)
LAYER_BEFORE = {
    (): "58e8f769c15353b875e8a6ce113668016cc9017faea2d1486774499730d9e357",
    ((0, 1),): "f02a5ec8f6fa01d54afa87c8fb056e8e1f139997b909ee813274219ae11fd2bc",
}


@pytest.fixture(scope="module")
def two():
    return load("induction-2l")


@pytest.mark.parametrize("key", list(BEFORE), ids=lambda k: "-".join(map(str, k)))
def test_run_is_byte_identical_to_the_code_before_hooks(key):
    name, step, seq, ablate = key
    r = load(name, step).run(SEQS[seq], ablate=ablate)
    assert hashlib.sha256(r.attentions.tobytes() + r.probs.tobytes()).hexdigest() == BEFORE[key]


@pytest.mark.parametrize("ablate", list(LAYER_BEFORE), ids=str)
def test_layer_steps_are_byte_identical_to_the_code_before_hooks(two, ablate):
    s = two.layer_steps(two.run(SEQS["k3x"], ablate=ablate), 1)
    parts = (s.x_q, s.q, s.k, s.v, s.heads.weights, s.heads.output, s.concat, s.output)
    assert hashlib.sha256(b"".join(p.numpy().tobytes() for p in parts)).hexdigest() == LAYER_BEFORE[ablate]


def test_an_identity_hook_on_every_point_changes_nothing(two):
    names = [hook_name(ly, h, p) for ly in range(2) for h in range(two.n_heads) for p in POINTS]
    seen = []

    def keep(x: torch.Tensor) -> torch.Tensor:
        seen.append(tuple(x.shape))
        return x

    plain, _, _ = two.forward(SEQS["k3x"])
    hooked, _, _ = two.forward(SEQS["k3x"], hooks=dict.fromkeys(names, keep))
    np.testing.assert_allclose(hooked.numpy(), plain.numpy(), atol=1e-6)
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
