"""Attention sources: every adapter's output satisfies the protocol, with the model's own numbers in its shapes."""

from __future__ import annotations

import pytest
import torch

from attnlab import attnfile, trained
from attnlab.attnexamples import EXAMPLES
from attnlab.sources import AttentionSource, check, from_encoder_run, has_qk, kind_of, shares_tokens

TEXT = "The animal didn't cross the street because it was too tired."
SYMBOLS = "a b c a b c a b".split()


@pytest.fixture(scope="module")
def minilm():
    from attnlab.pretrained import load_minilm

    return load_minilm()


def satisfies(source, shape: tuple[int, int, int, int], kind: str) -> None:
    """The protocol's fields, agreeing with each other, in the expected shape and kind."""
    assert isinstance(source, AttentionSource)
    assert check(source) is source
    assert tuple(source.attentions.shape) == shape and source.attentions.dtype == torch.float32
    assert kind_of(source) == kind
    if has_qk(source):
        n_kv_heads = source.keys.size(1)  # grouped: one key head per key/value head, which divide the query heads
        assert tuple(source.queries.shape[:3]) == shape[:3] and shape[1] % n_kv_heads == 0
        assert tuple(source.keys.shape[:3]) == (shape[0], n_kv_heads, shape[3])


def test_the_minilm_adapter_is_encoder_runs_attention_with_its_queries_and_keys(minilm):
    run = minilm.run(TEXT)
    source = from_encoder_run(minilm, run)
    satisfies(source, (minilm.n_layers, minilm.n_heads, run.n_tokens, run.n_tokens), "self")
    assert torch.equal(source.attentions, run.attentions) and source.tokens == tuple(run.tokens) == source.tokens_k
    assert source.model == "all-MiniLM-L6-v2" and has_qk(source) and shares_tokens(source)
    steps = minilm.layer_steps(run, 2).attention.heads  # what the Real model page's stages show
    assert torch.equal(source.queries[2], steps.q) and torch.equal(source.keys[2], steps.k)
    again = attnfile.from_encoder(minilm, TEXT)  # the capture API: the same numbers from a second forward pass
    for name in ("attentions", "queries", "keys"):
        assert torch.allclose(getattr(source, name), getattr(again, name), atol=1e-6)


def test_the_decoder_adapter_is_decoder_runs_causal_attention():
    decoder = trained.load("induction-2l")
    run = decoder.run(SYMBOLS)
    source = attnfile.from_decoder(decoder, SYMBOLS)
    satisfies(source, (decoder.n_layers, decoder.n_heads, len(run.tokens), len(run.tokens)), "causal")
    assert torch.allclose(source.attentions, torch.as_tensor(run.attentions), atol=1e-6) and list(
        source.tokens
    ) == list(run.tokens)
    assert has_qk(source) and shares_tokens(source)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_registered_example_builds_a_source(name):
    source = EXAMPLES[name].build(EXAMPLES[name].text)
    causal = name != "minilm"  # the decoders and language models see the past only
    satisfies(source, tuple(source.attentions.shape), "causal" if causal else "self")
    assert source.model


def test_an_uploaded_file_is_a_source_of_any_kind():
    g = torch.Generator().manual_seed(0)
    weights = torch.softmax(torch.randn(2, 3, 4, 5, generator=g), dim=-1)  # 4 target tokens, 5 source tokens
    q, k = torch.randn(2, 3, 4, 8, generator=g), torch.randn(2, 3, 5, 8, generator=g)
    data = attnfile.to_bytes(weights, list("abcd"), list("vwxyz"), model="m", queries=q, keys=k)
    source = attnfile.load("cross.safetensors", data)
    satisfies(source, (2, 3, 4, 5), "cross")
    assert has_qk(source) and not shares_tokens(source)
    bare = attnfile.load("self.safetensors", attnfile.to_bytes(weights[..., :4].softmax(-1), list("abcd")))
    satisfies(bare, (2, 3, 4, 4), "self")
    assert not has_qk(bare) and shares_tokens(bare)


def test_any_object_with_the_fields_is_a_source_and_check_names_what_disagrees():
    class Plain:  # not an AttentionFile: the protocol is structural
        attentions = torch.full((1, 2, 3, 3), 1 / 3)
        tokens = tokens_k = ("a", "b", "c")
        model, queries, keys, kind, causal = "plain", None, None, "self", False

    satisfies(Plain(), (1, 2, 3, 3), "self")
    Plain.tokens_k = ("a", "b")
    with pytest.raises(ValueError, match="tokens"):
        check(Plain())
    Plain.tokens_k, Plain.queries = Plain.tokens, torch.zeros(1, 2, 4, 8)
    with pytest.raises(ValueError, match="queries"):
        check(Plain())
