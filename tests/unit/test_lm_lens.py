"""The logit lens and the direct attribution (contract 19) against transformers' LlamaForCausalLM on the same folder.

The lens is held to transformers' hidden states (the stream after the embedding and after each layer; its last one
comes out of the final norm already) read through that model's own norm and lm_head. The attribution is rebuilt
from what transformers' modules write, caught with PyTorch forward hooks on its embedding, each layer's o_proj
input (the heads' outputs side by side) and MLP, and the final norm's input: none of it goes through attnlab.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab import limits
from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32, TOL_LM_LOGITS, TOL_LM_PARTS
from attnlab.lm import lens as lenslib
from attnlab.lm import load
from tests.conftest import REFERENCE_GROUP
from tests.examples import examples
from tests.near import assert_near
from tests.unit.test_lm import TEXT, tiny_model

SHAPES = {  # grouped heads and tied embeddings; a separate lm_head; an o_proj bias (Llama's attention_bias)
    "tied": {},
    "untied": {"tie_word_embeddings": False, "num_hidden_layers": 3},
    "biased": {"qkv_bias": True, "o_bias": True},
}


@pytest.fixture(scope="module", params=list(SHAPES))
def pair(request, tmp_path_factory):
    """A small random model and transformers' LlamaForCausalLM reading the folder it saved."""
    from transformers import LlamaForCausalLM

    lm = tiny_model(seed=7, **SHAPES[request.param])
    folder = tmp_path_factory.mktemp(f"lens-{request.param}")
    lm.save_pretrained(folder)
    return lm, LlamaForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()


def caught(ref, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """transformers' pass with forward hooks: the embedding, each o_proj's input and MLP's output, the final norm's
    input, and the logits."""
    seen: dict[str, torch.Tensor] = {}
    body = ref.model
    handles = [body.embed_tokens.register_forward_hook(lambda m, i, o: seen.__setitem__("embed", o[0]))]
    handles.append(body.norm.register_forward_pre_hook(lambda m, i: seen.__setitem__("final", i[0][0])))
    for n, layer in enumerate(body.layers):
        o_proj = layer.self_attn.o_proj
        handles.append(o_proj.register_forward_pre_hook(lambda m, i, n=n: seen.__setitem__(f"{n}.z", i[0][0])))
        handles.append(layer.mlp.register_forward_hook(lambda m, i, o, n=n: seen.__setitem__(f"{n}.mlp", o[0])))
    try:
        with torch.no_grad():
            seen["logits"] = ref(ids).logits[0]
    finally:
        for handle in handles:
            handle.remove()
    return seen


@REFERENCE_GROUP
def test_the_lens_reads_transformers_hidden_states_through_its_norm_and_head(pair):
    lm, ref = pair
    ids = lm.encode(TEXT)
    with torch.no_grad():
        out = ref(torch.tensor([ids]), output_hidden_states=True)
        hidden = out.hidden_states  # the embedding, each layer's output but the last, then the last one normed
        theirs = [ref.lm_head(ref.model.norm(h[0])) for h in hidden[:-1]] + [ref.lm_head(hidden[-1][0])]
    ours = lm.lens(ids)
    assert ours.shape == (lm.n_layers + 1, len(ids), lm.cfg.vocab_size) and len(hidden) == lm.n_layers + 1
    for row, want in zip(ours, theirs, strict=True):
        assert_near(row, want, (TOL_LM_LOGITS, RTOL_FLOAT32))  # logits: contract 16's floor
    streams = lenslib.trace(lm, ids).streams()
    for row, want in zip(streams[:-1], hidden[:-1], strict=True):
        assert_near(row, want[0])  # the stream: float32's pair
    assert_near(ours[-1], lm.forward(torch.tensor([ids])).logits[0], (TOL_LM_LOGITS, RTOL_FLOAT32))
    assert not torch.allclose(ours[0], ours[-1], atol=0.1)  # the layers change what the stream says


@REFERENCE_GROUP
@torch.no_grad()
def test_each_part_is_what_transformers_modules_wrote_read_with_the_frozen_scale(pair):
    lm, ref = pair
    ids = lm.encode(TEXT)
    seen = caught(ref, torch.tensor([ids]))
    d, n_heads = lm.cfg.head_dim, lm.n_heads
    for position, token in [(len(ids) - 1, 5), (3, lm.token_id("m")), (0, 2)]:
        x = seen["final"][position].double()
        read = ref.model.norm.weight.double() / torch.sqrt(x.pow(2).mean() + ref.model.norm.variance_epsilon)
        read = read * ref.lm_head.weight[token].double()
        want = {"embed": float(seen["embed"][position].double() @ read)}
        for n, layer in enumerate(ref.model.layers):
            o_proj = layer.self_attn.o_proj
            z = seen[f"{n}.z"][position].double()  # (H·d,): the heads' outputs side by side
            for h in range(n_heads):
                through = z[h * d : (h + 1) * d] @ o_proj.weight[:, h * d : (h + 1) * d].double().T
                want[f"{n}.{h}"] = float(through @ read)
            if o_proj.bias is not None:
                want[f"{n}.bias"] = float(o_proj.bias.double() @ read)
            want[f"{n}.mlp"] = float(seen[f"{n}.mlp"][position].double() @ read)
        got = lm.attribution(ids, position, token)
        assert list(got) == list(want)
        for name, value in want.items():
            assert math.isclose(got[name], value, rel_tol=RTOL_FLOAT32, abs_tol=TOL_FLOAT32), name
        logit = float(seen["logits"][position, token])
        assert math.isclose(sum(got.values()), logit, abs_tol=TOL_LM_PARTS)
        assert math.isclose(math.fsum(want.values()), logit, abs_tol=TOL_LM_PARTS)  # the frozen scale is exact


@torch.no_grad()
def test_each_heads_bar_is_its_out_hook_through_its_slice_of_w_o():
    """The same, inside attnlab: the `blocks.L.H.out` hook points give each head's output."""
    lm = tiny_model(seed=3)
    ids = lm.encode(TEXT)
    outs: dict[tuple[int, int], torch.Tensor] = {}

    def keep(layer: int, head: int):
        def hook(x: torch.Tensor) -> torch.Tensor:
            outs[layer, head] = x[0].detach().clone()
            return x

        return hook

    hooks = {f"blocks.{ly}.{h}.out": keep(ly, h) for ly in range(lm.n_layers) for h in range(lm.n_heads)}
    lm.forward(torch.tensor([ids]), hooks=hooks)
    position, token = 6, lm.token_id("o")
    x = lenslib.trace(lm, ids).streams()[-1, position]
    read = lenslib.frozen_scale(lm, x) * lenslib.unembedding(lm, token)
    got = lm.attribution(ids, position, token)
    d = lm.cfg.head_dim
    for (layer, head), out in outs.items():
        w_o = lm.model.model.layers[layer].self_attn.o_proj.weight.double()[:, head * d : (head + 1) * d]
        want = float(out[position].double() @ w_o.T @ read)
        assert math.isclose(got[f"{layer}.{head}"], want, rel_tol=RTOL_FLOAT32, abs_tol=TOL_FLOAT32)


@given(seed=st.integers(0, 50), position=st.integers(0, len(TEXT)), token=st.integers(0, 38))
@settings(max_examples=examples(30), deadline=None)
def test_the_parts_sum_to_the_logit_anywhere(seed, position, token):
    lm = tiny_model(seed=seed)
    ids = lm.encode(TEXT)
    parts = lm.attribution(torch.tensor(ids), position, token)
    assert len(parts) == 1 + lm.n_layers * (lm.n_heads + 1)
    logit = float(lm.forward(torch.tensor([ids])).logits[0, position, token])
    assert math.isclose(sum(parts.values()), logit, abs_tol=TOL_LM_PARTS)


def test_bad_ids_positions_and_tokens_are_refused_by_name(monkeypatch):
    lm = tiny_model()
    ids = lm.encode("the moon")
    for bad in ("abc", [1.5, 2], torch.tensor([[1, 2], [3, 4]]), torch.tensor([0.0, 1.0]), [0, 999]):
        with pytest.raises(ValueError, match="ids"):
            lm.lens(bad)
    with pytest.raises(ValueError, match="position"):
        lm.attribution(ids, len(ids), 3)
    with pytest.raises(ValueError, match="token"):
        lm.attribution(ids, 0, lm.cfg.vocab_size)
    with pytest.raises(ValueError, match="not one token"):
        lm.token_id("月亮")
    monkeypatch.setattr(limits, "MAX_LM_LENS_BYTES", 100)
    monkeypatch.setattr(lenslib, "MAX_LM_LENS_BYTES", 100)
    with pytest.raises(ValueError, match="cap"):
        lm.lens(ids)


@pytest.mark.parametrize("name", ["zh", "en"])
def test_the_shipped_runs_lens_ends_in_their_output(name):
    lm = load(name)
    ids = lm.prepare("床前明月光，疑是地上霜。" if name == "zh" else "And the whole earth was of one").ids
    rows = lm.lens(ids)
    assert_near(rows[-1], lm.forward(torch.tensor([ids])).logits[0], (TOL_LM_LOGITS, RTOL_FLOAT32))
    top = int(rows[-1, -1].argmax())
    assert math.isclose(sum(lm.attribution(ids, len(ids) - 1, top).values()), float(rows[-1, -1, top]), abs_tol=1e-4)
