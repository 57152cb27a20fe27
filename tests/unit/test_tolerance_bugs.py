"""Each tolerance issue 57 widened still fails on a wrong computation: one small, deliberate bug per widened test.

The tests below run a widened test's own body with one bug put in (a RoPE base 1 % off on one path, a head's slice
off by one, a patch rounded through bfloat16) and expect its assertion to fail. A later widening that lets such a bug
through fails here. How far each was widened, and why: tests/near.py, attnlab/tolerance.py and the issue's note.
"""

from __future__ import annotations

import pytest

from attnlab import positions
from attnlab.lm import model as lm_model
from attnlab.lmlab import stages
from attnlab.trained import patching
from tests.conftest import REFERENCE_GROUP
from tests.unit import test_lm, test_lmlab, test_positions, test_trained_patching

OFF = 1.01  # a RoPE base 1 % off: angles off by under 0.1 % at these lengths


def rope_off(real):
    """The same rotation with its base 1 % off."""
    return lambda x, positions=None, *, base=10000.0, interleaved=False: real(
        x, positions, base=base * OFF, interleaved=interleaved
    )


def test_the_hooked_path_with_its_rope_off_fails_the_identity_hooks_test(monkeypatch):
    real = lm_model.Attention.one_head

    def one_head(self, x, proj, head, pos, turn):
        out = real(self, x, proj, head, pos, False)
        return positions.rope(out, pos, base=self.cfg.rope_theta * OFF) if turn else out

    monkeypatch.setattr(lm_model.Attention, "one_head", one_head)
    with pytest.raises(AssertionError, match="max"):
        test_lm.test_identity_hooks_change_nothing_and_unknown_points_are_refused()


@pytest.mark.parametrize("changes", [{}, {"qkv_bias": True, "model_type": "qwen2"}, {"num_key_value_heads": 1}])
def test_a_layers_stages_with_their_rope_off_fail_against_the_models_own_pass(monkeypatch, changes):
    real = stages.multi_head_steps
    monkeypatch.setattr(
        stages, "multi_head_steps", lambda *a, rope_base, **kw: real(*a, rope_base=rope_base * OFF, **kw)
    )
    with pytest.raises(AssertionError, match="max"):
        test_lmlab.test_a_layers_stages_are_the_models_own_pass(changes)


@pytest.fixture(scope="module")
def two():
    from attnlab.trained import load

    return load("induction-2l")


@pytest.fixture(scope="module")
def corrupt(two):
    return patching.shuffle_first_period(two, test_trained_patching.CLEAN, seed=3)


def test_a_batched_patch_rounded_through_bfloat16_fails_one_head_at_a_time(monkeypatch, two, corrupt):
    real = patching._rows
    monkeypatch.setattr(patching, "_rows", lambda n, row, value: real(n, row, value.bfloat16().float()))
    with pytest.raises(AssertionError):
        test_trained_patching.test_patch_heads_matches_one_head_at_a_time(two, corrupt)


def test_a_batched_path_rounded_through_bfloat16_fails_path_by_path(monkeypatch, two, corrupt):
    real = patching.path_hooks

    def rounded(decoder, r, paths):
        hooks = real(decoder, r, paths)
        if len(paths) == 1:
            return hooks
        return {name: (lambda x, f=f: f(x).bfloat16().float()) for name, f in hooks.items()}

    monkeypatch.setattr(patching, "path_hooks", rounded)
    with pytest.raises(AssertionError):
        test_trained_patching.test_path_map_matches_patch_path(two, corrupt)


def test_a_senders_slice_of_w_o_off_by_one_head_fails_the_no_path_test(monkeypatch, two, corrupt):
    def off_by_one(decoder, r, sender):
        ls, hs = sender
        dk = decoder.model.cfg.d_model // decoder.n_heads
        w_o = decoder.model.w_o[ls][(hs + 1) * dk : (hs + 2) * dk]  # the next head's rows
        return (r.out_clean[ls][:, hs] - r.out_corrupt[ls][:, hs]) @ w_o

    monkeypatch.setattr(patching, "_sender_delta", off_by_one)
    with pytest.raises(AssertionError):
        test_trained_patching.test_a_sender_with_no_path_restores_nothing(two, corrupt)


@REFERENCE_GROUP
def test_our_rope_off_fails_against_transformers(monkeypatch, tmp_path):
    with pytest.raises(AssertionError, match="max"):
        monkeypatch.setattr(positions, "rope", rope_off(positions.rope))
        test_positions.test_rotate_half_equals_transformers_apply_rotary_pos_emb(16, 11, 500000.0)
    monkeypatch.undo()
    lm = test_lm.tiny_model()
    lm.save_pretrained(tmp_path)
    monkeypatch.setattr(lm_model, "rope", rope_off(lm_model.rope))
    with pytest.raises(AssertionError, match="max"):
        test_lm.test_transformers_reads_our_folder_and_gives_the_same_logits_and_weights((lm, tmp_path))
