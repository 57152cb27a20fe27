"""bertviz's call shape: head_view/model_view(outputs.attentions, tokens) draw what the attention-file form draws."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from attnlab.attnfile import AttentionFile, from_attentions
from attnlab.figures import head_view, model_view
from tests.conftest import REFERENCE_GROUP

L, H, T = 3, 4, 5
TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]


def layers(batch: int = 1, seed: int = 0, t_k: int = T) -> tuple[torch.Tensor, ...]:
    """What a transformers model returns as outputs.attentions: a tuple over layers of (batch, H, T_q, T_k)."""
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, H, T, t_k, generator=g).softmax(-1) for _ in range(L))


def numbers(fig: go.Figure) -> list:
    """Every trace's data, as JSON numbers, to compare two figures."""
    return [trace.to_plotly_json() for trace in fig.data]


def test_both_call_shapes_draw_the_same_numbers():
    attention = layers()
    file = AttentionFile(torch.cat(attention).float(), tuple(TOKENS), tuple(TOKENS))  # (L, H, T, T)
    assert numbers(head_view(attention, TOKENS, layer=2, head=1, query=3)) == numbers(head_view(file, 2, 1, query=3))
    assert numbers(head_view(attention, TOKENS)) == numbers(head_view(file, layer=0, head=0))
    assert numbers(model_view(attention, TOKENS)) == numbers(model_view(file))
    assert numbers(model_view(file, (1, 2))) == numbers(model_view(attention, TOKENS, picked=(1, 2)))


def test_a_batch_of_two_draws_item_0():
    two = layers(batch=2)
    first = tuple(layer[:1] for layer in two)
    assert numbers(head_view(two, TOKENS, layer=1, head=3)) == numbers(head_view(first, TOKENS, layer=1, head=3))
    other = tuple(layer[1:] for layer in two)
    assert numbers(head_view(two, TOKENS, layer=1, head=3)) != numbers(head_view(other, TOKENS, layer=1, head=3))
    assert torch.equal(from_attentions(two, TOKENS).attentions, torch.stack([layer[0] for layer in two]))


def test_the_lines_are_the_heads_weights():
    attention = layers(seed=3)
    fig = head_view(attention, TOKENS, layer=1, head=2, query=4)
    assert isinstance(fig, go.Figure) and fig.layout.title.text.startswith("Layer 2 · Head 3")
    widths = [tr.line.width for tr in fig.data if tr.mode == "lines"]
    assert widths, "no lines drawn"
    assert float(attention[1][0, 2, 4].max()) > 0 and len(widths) <= T


def test_half_precision_cross_attention_and_numpy_arrays_are_read():
    cross = tuple(layer.half() for layer in layers(t_k=3))
    file = from_attentions(cross, TOKENS, ["a", "b", "c"])
    assert file.kind == "cross" and file.attentions.dtype == torch.float32 and file.tokens_k == ("a", "b", "c")
    assert isinstance(head_view(cross, TOKENS, tokens_k=["a", "b", "c"]), go.Figure)
    as_numpy = tuple(layer.numpy() for layer in layers())
    assert numbers(model_view(as_numpy, TOKENS)) == numbers(model_view(layers(), TOKENS))


def test_a_causal_decoders_attention_is_marked_causal():
    causal = tuple(torch.tril(torch.ones(1, H, T, T)) / torch.arange(1, T + 1).view(1, 1, T, 1) for _ in range(L))
    assert from_attentions(causal, TOKENS).causal and not from_attentions(layers(), TOKENS).causal


@pytest.mark.parametrize(
    ("attention", "tokens", "message"),
    [
        (None, TOKENS, "tuple over layers"),
        ((), TOKENS, "no layers"),
        ((None, None), TOKENS, "eager"),
        (tuple(torch.rand(H, T, T) for _ in range(L)), TOKENS, r"\(batch, heads, T_q, T_k\)"),
        ((torch.rand(1, H, T, T), torch.rand(1, H, T + 1, T + 1)), TOKENS, "same shape"),
        (layers(), TOKENS[:-1], "4 tokens for attention over 5"),
        (layers(), "the cat sat", "token strings"),
        (layers(), [1, 2, 3, 4, 5], "token strings"),
        (layers(), None, "needs the tokens"),
    ],
)
def test_bad_shapes_raise_a_clear_value_error(attention, tokens, message):
    with pytest.raises(ValueError, match=message):
        head_view(attention, tokens)


def test_a_head_outside_the_model_is_named():
    with pytest.raises(ValueError, match="layer 3, head 0 outside 3 layers x 4 heads"):
        head_view(layers(), TOKENS, layer=3)
    assert np.isfinite(from_attentions(layers(), TOKENS).attentions.numpy()).all()


@REFERENCE_GROUP
def test_a_real_transformers_models_outputs_attentions():
    """A tiny randomly initialised BERT (built here, nothing downloaded), eager attention as the README says."""
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32
    )
    torch.manual_seed(0)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    model.set_attn_implementation("eager")
    ids = torch.tensor([[2, 7, 11, 13, 3], [2, 5, 5, 5, 3]])  # a batch of two sentences
    with torch.no_grad():
        outputs = model(input_ids=ids, output_attentions=True)
    assert len(outputs.attentions) == 2 and tuple(outputs.attentions[0].shape) == (2, 2, 5, 5)
    file = from_attentions(outputs.attentions, TOKENS)
    assert torch.equal(file.attentions, torch.stack([a[0] for a in outputs.attentions]))
    fig = head_view(outputs.attentions, TOKENS, layer=1, head=1)
    assert numbers(fig) == numbers(head_view(file, 1, 1)) and isinstance(
        model_view(outputs.attentions, TOKENS), go.Figure
    )
