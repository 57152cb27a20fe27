"""attnlab.lm's Llama as an attention file: the same post-RoPE queries, grouped keys and weights transformers gives.

A small random LanguageModel (grouped heads, θ = 500, as tests/unit/test_lm.py builds it) is saved with
`save_pretrained`; transformers' LlamaForCausalLM reads the folder, and `attnfile.capture` records it through the
attention interface. `from_language_model` on our model must give the same file within float32 rounding.
"""

from __future__ import annotations

import torch

from attnlab.attnfile import capture, file_bytes, from_language_model, load
from attnlab.attnfile.rule import layer_weights
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near
from tests.unit.test_attnfile_capture import hf
from tests.unit.test_lm import TEXT, tiny_model

pytestmark = REFERENCE_GROUP  # with the other tests that import transformers: one worker imports it


class LMTokenizer:
    """Our model's own vocabulary in the shape capture calls: ids with <bos> first, and each id's text."""

    def __init__(self, lm) -> None:
        self.lm = lm

    def __call__(self, text: str, return_tensors: str = "pt") -> dict[str, torch.Tensor]:
        return {"input_ids": torch.tensor([self.lm.encode(text)])}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [self.lm.token(i) for i in ids]


def test_our_llama_gives_the_file_transformers_gives_for_the_same_weights(tmp_path):
    lm = tiny_model()
    ours = from_language_model(lm, TEXT)
    lm.save_pretrained(tmp_path)
    theirs = capture(hf().LlamaForCausalLM.from_pretrained(tmp_path), LMTokenizer(lm), TEXT)["self"]
    assert ours.has_qk and not ours.qk_declined and ours.causal and ours.tokens == theirs.tokens
    assert ours.queries.shape == theirs.queries.shape and ours.keys.shape == (2, 2, len(ours.tokens), 8)
    for name in ("attentions", "queries", "keys"):
        assert_near(getattr(ours, name), getattr(theirs, name), msg=name)
    assert ours.scale == theirs.scale and ours.window == theirs.window == ()
    back = load("lm.safetensors", file_bytes(ours))
    assert back.n_kv_heads == 2 and torch.equal(back.keys, ours.keys)


def test_a_layers_sliding_window_is_stated_and_kept_to():
    lm = tiny_model(windows=(None, 4))
    f = from_language_model(lm, TEXT)
    assert f.has_qk and f.window == (None, 4)
    assert float(f.attentions[1, :, 6:, :2].max()) == 0.0  # past the window of 4, the first keys are out of sight
    assert_near(layer_weights(f, 1), f.attentions[1])


def test_weights_the_queries_and_keys_do_not_give_back_are_declined(monkeypatch):
    lm = tiny_model()
    forward = lm.forward

    def skewed(ids, **kw):
        out = forward(ids, **kw)
        out.attentions[0] = out.attentions[0].roll(1, dims=1)  # heads swapped: not these queries' weights
        return out

    monkeypatch.setattr(lm, "forward", skewed)
    f = from_language_model(lm, TEXT)
    assert not f.has_qk and f.qk_declined == "mismatch"
