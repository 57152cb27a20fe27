"""attnlab.lm against transformers' LlamaForCausalLM: the folder we save loads there with the same logits and weights.

A small random model (grouped heads, θ = 500, weights large enough that attention is far from uniform) is saved
once per module; transformers reads it with eager attention. Hooks are checked against an edited copy of the
weights, the training (SDPA) path against the path every page uses.
"""

from __future__ import annotations

import json

import pytest
import torch

from attnlab.limits import RTOL_FLOAT32, TOL_LM_LOGITS
from attnlab.lm import BOS, UNK, LanguageModel, hook_name, load
from attnlab.lm.config import LMConfig
from attnlab.lm.model import Llama
from attnlab.lm.vocab import CharVocab
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near

CHARS = list("abcdefghijklmnopqrstuvwxyz .,!?\n") + ["床", "前", "明", "月", "光"]
TEXT = "the moon, bright.\n床前明月光 ok?"


def tiny_model(seed: int = 0, *, chars: list[str] = CHARS, name: str = "", **changes) -> LanguageModel:
    """A random two-layer model on a character vocabulary; weights N(0, 0.3) so heads attend sharply."""
    cfg = dict(
        vocab_size=len(chars) + 2,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        rope_theta=500.0,
        max_position_embeddings=48,
        bos_token_id=0,
    )
    model = Llama(LMConfig(**{**cfg, **changes}))
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3 + (1.0 if p.dim() == 1 else 0.0))
    return LanguageModel(model, CharVocab([BOS, UNK, *chars]), name=name)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    lm = tiny_model()
    folder = tmp_path_factory.mktemp("lm")
    lm.save_pretrained(folder)
    return lm, folder


@REFERENCE_GROUP
def test_transformers_reads_our_folder_and_gives_the_same_logits_and_weights(saved):
    from transformers import LlamaForCausalLM

    lm, folder = saved
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and config["tie_word_embeddings"] is True
    ref = LlamaForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    ids = torch.tensor([lm.encode(TEXT)])
    with torch.no_grad():
        theirs = ref(ids, output_attentions=True)
    ours = lm.forward(ids)
    assert_near(ours.logits, theirs.logits, (TOL_LM_LOGITS, RTOL_FLOAT32))
    assert len(ours.attentions) == len(theirs.attentions) == 2
    for a, b in zip(ours.attentions, theirs.attentions, strict=True):
        assert a.shape == (1, 4, ids.size(1), ids.size(1))
        assert_near(a, b)  # weights: float32's pair
    assert float(ours.attentions[0].amax()) > 0.5  # not a model whose heads all spread evenly


def test_load_gives_back_the_saved_model_with_its_config(saved):
    lm, folder = saved
    again = load(folder)
    ids = torch.tensor([lm.encode(TEXT)])
    assert torch.equal(again.forward(ids).logits, lm.forward(ids).logits)  # the same float32 weights, the same pass
    keys = {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"}
    keys |= {"num_key_value_heads", "rope_theta", "max_position_embeddings", "rms_norm_eps", "tie_word_embeddings"}
    assert (
        keys <= set(again.config) and again.config["rope_theta"] == 500.0 and again.config["num_key_value_heads"] == 2
    )
    assert again.steps == [] and again.max_len == 48
    with pytest.raises(TypeError):
        again.config["rope_theta"] = 1.0  # read-only


def test_encode_decode_and_unknown_characters():
    lm = tiny_model()
    ids = lm.encode("ab€床€")
    assert ids[0] == lm.vocab.bos_id and ids[3] == ids[5] == lm.vocab.unk_id
    assert lm.decode(ids) == f"ab{UNK}床{UNK}" and lm.unknown("ab€床€x¥") == ["€", "¥"]
    prep = lm.prepare("x" * 100, keep="end")
    assert prep.cut == 100 - 47 and len(prep.ids) == 48 and prep.text == "x" * 47
    short = lm.prepare("床€", room=3)
    assert short.cut == 0 and short.unknown == ["€"] and short.tokens == [BOS, "床", UNK]


def test_bad_text_and_ids_are_refused_with_one_line():
    lm = tiny_model()
    for call in (lambda: lm.predict(""), lambda: lm.generate("", 3), lambda: lm.prepare("")):
        with pytest.raises(ValueError, match="empty"):
            call()
    with pytest.raises(ValueError, match="LongTensor"):
        lm.forward(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="1 to 48"):
        lm.forward(torch.zeros(1, 49, dtype=torch.long))
    with pytest.raises(ValueError, match="ids must lie"):
        lm.forward(torch.tensor([[0, 999]]))


def test_predict_gives_the_likeliest_next_characters_of_the_last_row():
    lm = tiny_model()
    pred = lm.predict("the moon", k=5)
    probs = torch.softmax(lm.forward(torch.tensor([lm.encode("the moon")])).logits[0, -1].double(), -1)
    best = torch.topk(probs, 5)
    assert pred.tokens == [lm.token(i) for i in best.indices.tolist()]
    # the same float32 logits through the same float64 softmax: equal but for float64 rounding, on values below 1
    assert pred.probs == pytest.approx(best.values.tolist(), abs=1e-12) and pred.unknown == [] and pred.cut == 0
    assert pred.probs == sorted(pred.probs, reverse=True)


def test_identity_hooks_change_nothing_and_unknown_points_are_refused():
    lm = tiny_model()
    ids = torch.tensor([lm.encode(TEXT)])
    hooks = {hook_name(ly, h, p): (lambda t: t.clone()) for ly in range(2) for h in range(4) for p in "qkv"}
    hooks |= {hook_name(ly, h, "out"): (lambda t: t * 1.0) for ly in range(2) for h in range(4)}
    # a hooked k or v gives each query head its own copy of the shared head: the same sums in other shapes
    assert_near(lm.forward(ids, hooks).logits, lm.forward(ids).logits)
    with pytest.raises(ValueError, match="no hook point named 'blocks.2.0.q'"):
        lm.forward(ids, {"blocks.2.0.q": lambda t: t})


def test_zeroing_a_heads_output_equals_zeroing_its_columns_of_o_proj():
    lm, edited = tiny_model(), tiny_model()
    with torch.no_grad():
        edited.model.model.layers[1].self_attn.o_proj.weight[:, 16:24] = 0  # head 2's columns (head_dim 8)
    ids = torch.tensor([lm.encode(TEXT)])
    hooked = lm.forward(ids, {hook_name(1, 2, "out"): torch.zeros_like}).logits
    assert_near(hooked, edited.forward(ids).logits)


def test_a_hooked_key_input_changes_only_that_query_heads_copy_of_its_shared_head():
    lm = tiny_model()
    ids = torch.tensor([lm.encode(TEXT)])
    plain = lm.forward(ids).attentions[0][0]  # (H, T, T)
    hooked = lm.forward(ids, {hook_name(0, 1, "k"): lambda t: t.flip(1)}).attentions[0][0]
    assert torch.equal(hooked[[0, 2, 3]], plain[[0, 2, 3]])  # head 0 shares key/value head 0 with head 1
    assert not torch.allclose(hooked[1], plain[1], atol=1e-3)


def test_the_training_path_is_the_same_function():
    lm = tiny_model()
    ids = torch.tensor([lm.encode(TEXT), lm.encode(TEXT[::-1])])
    with torch.no_grad():
        fused = lm.model(ids, fused=True)[0]
    assert_near(fused, lm.forward(ids).logits, (TOL_LM_LOGITS, RTOL_FLOAT32))  # SDPA's fused kernel: other sums
