"""capture() against each model's own output_attentions: tiny random BERT, GPT-2 and BART built here, and MiniLM.

Nothing is downloaded: the models come from tiny configs with a fixed seed, the tokenizer is a
WordLevel `tokenizers` model wrapped in PreTrainedTokenizerFast (built in memory), and a bare
duck-typed tokenizer checks that capture needs only __call__ and convert_ids_to_tokens.
transformers is imported on first use, here (`hf`).
"""

from __future__ import annotations

import functools

import pytest
import torch

from attnlab.attnfile import AttentionFile, capture, file_bytes, from_decoder, from_encoder, interface, load
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near

pytestmark = REFERENCE_GROUP  # with the other tests that import transformers: one worker imports it


@functools.cache
def hf():
    """transformers, imported offline on first use: collecting this module (every worker does) imports nothing heavy."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HF_HUB_OFFLINE", "1")
        env.setenv("TRANSFORMERS_OFFLINE", "1")
        import transformers

    return transformers


WORDS = ["<pad>", "<s>", "</s>", "<unk>", "the", "cat", "sat", "on", "mat", "le", "chat", "dort", "a", "dog"]
TEXT, TARGET = "the cat sat on the mat", "le chat dort"
TOL = 1e-6


def tiny_tokenizer():
    """A real fast tokenizer over a 14-word vocabulary, built in memory."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return hf().PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )


class BareTokenizer:
    """Only what capture may use: called with return_tensors="pt", and convert_ids_to_tokens."""

    def __call__(self, text: str, return_tensors: str) -> dict[str, torch.Tensor]:
        assert return_tensors == "pt"
        return {"input_ids": torch.tensor([[WORDS.index(w) if w in WORDS else 3 for w in text.split()]])}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [WORDS[i] for i in ids]


def tiny(name: str):
    """A tiny random model of one family, in train mode with its default (SDPA) attention, as a user might hold it."""
    torch.manual_seed(0)
    small = {"vocab_size": len(WORDS), "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
    if name == "bert":
        config = hf().BertConfig(
            hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32, **small
        )
        return hf().BertModel(config)
    if name == "gpt2":
        config = hf().GPT2Config(n_embd=16, n_layer=3, n_head=2, n_positions=32, **small)
        return hf().GPT2LMHeadModel(config)
    config = hf().BartConfig(
        d_model=16,
        encoder_layers=2,
        decoder_layers=3,
        encoder_attention_heads=4,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        decoder_start_token_id=1,
        **small,
    )
    return hf().BartForConditionalGeneration(config)


def own_attentions(model, tokenizer, target: str | None = None):
    """The model's own output_attentions, run the documented way (eager attention, eval mode)."""
    model.set_attn_implementation("eager")
    model.eval()
    source = tokenizer(TEXT, return_tensors="pt")
    inputs = {"input_ids": source["input_ids"]}
    if target is not None:
        inputs["decoder_input_ids"] = tokenizer(target, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model(**inputs, output_attentions=True)
    names = ["attentions"] if target is None else ["encoder_attentions", "decoder_attentions", "cross_attentions"]
    return [torch.stack(getattr(out, n))[:, 0] for n in names]


def check_qk(f: AttentionFile) -> None:
    """Recorded queries and keys give back the file's attentions: softmax(q kᵀ / √d), masked when causal."""
    assert f.has_qk
    scores = f.queries @ f.keys.transpose(-2, -1) / f.queries.size(-1) ** 0.5
    if f.causal:
        scores = scores.masked_fill(torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    assert torch.allclose(scores.softmax(-1), f.attentions, atol=1e-5)


@pytest.mark.parametrize("make_tokenizer", [tiny_tokenizer, BareTokenizer])
@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_self_attention_models_equal_their_own_output(family, make_tokenizer):
    model, tokenizer = tiny(family), make_tokenizer()
    files = capture(model, tokenizer, TEXT)
    assert model.training and model.config._attn_implementation == "sdpa"  # mode and implementation restored
    (want,) = own_attentions(model, tokenizer)
    f = files["self"]
    assert list(files) == ["self"] and f.kind == "self"
    assert f.attentions.shape == want.shape and (f.attentions - want).abs().max() <= TOL
    assert f.tokens == f.tokens_k == tuple(TEXT.split())
    assert f.causal == (family == "gpt2")  # GPT-2 is a causal decoder, BERT sees every token
    check_qk(f)


@pytest.mark.parametrize("make_tokenizer", [tiny_tokenizer, BareTokenizer])
def test_encoder_decoder_gives_encoder_decoder_and_cross(make_tokenizer):
    model, tokenizer = tiny("bart"), make_tokenizer()
    files = capture(model, tokenizer, TEXT, target=TARGET)
    assert list(files) == ["encoder", "decoder", "cross"]
    for kind, want in zip(files, own_attentions(model, tokenizer, TARGET), strict=True):
        f = files[kind]
        assert f.kind == kind and f.attentions.shape == want.shape and (f.attentions - want).abs().max() <= TOL
        check_qk(f)
    source, target = tuple(TEXT.split()), tuple(TARGET.split())
    assert (files["encoder"].tokens, files["encoder"].tokens_k, files["encoder"].causal) == (source, source, False)
    assert (files["decoder"].tokens, files["decoder"].tokens_k, files["decoder"].causal) == (target, target, True)
    assert (files["cross"].tokens, files["cross"].tokens_k, files["cross"].causal) == (target, source, False)
    assert files["cross"].attentions.shape == (3, 2, len(target), len(source))


def test_captured_files_save_and_load_back():
    files = capture(tiny("bart"), tiny_tokenizer(), TEXT, target=TARGET)
    for kind, f in files.items():
        back = load(f"{kind}.safetensors", file_bytes(f))
        assert torch.equal(back.attentions, f.attentions) and torch.equal(back.queries, f.queries)
        assert (back.tokens, back.tokens_k, back.kind, back.causal, back.model) == (
            f.tokens,
            f.tokens_k,
            f.kind,
            f.causal,
            f.model,
        )


def test_an_encoder_decoder_without_target_is_a_clear_error():
    with pytest.raises(ValueError, match="target"):
        capture(tiny("bart"), tiny_tokenizer(), TEXT)


@pytest.mark.parametrize("family", ["bert", "gpt2", "bart"])
def test_the_attention_interface_and_the_hooks_record_the_same_queries_and_keys(family, monkeypatch):
    """BERT, GPT-2 and BART: recorded where attention is computed, or (no interface) at the projections: the same."""
    target = TARGET if family == "bart" else None
    there = capture(tiny(family), tiny_tokenizer(), TEXT, target=target)
    monkeypatch.setattr(interface, "registries", lambda model: None)  # as a model without the interface
    hooked = capture(tiny(family), tiny_tokenizer(), TEXT, target=target)
    for kind, f in there.items():
        assert torch.equal(f.attentions, hooked[kind].attentions) and not f.qk_declined
        assert_near(f.queries, hooked[kind].queries)  # the same projections, recorded in two places
        assert_near(f.keys, hooked[kind].keys)
        assert f.scale == pytest.approx((f.queries.size(-1) ** -0.5,) * f.n_layers) and hooked[kind].scale == ()


def test_minilm_capture_equals_our_own_forward_pass_with_queries_and_keys():
    """transformers' BertModel on MiniLM through capture against from_encoder (our attention), head by head."""
    from attnlab.pretrained import load_minilm
    from attnlab.pretrained.package import model_dir

    encoder = load_minilm()
    ours = from_encoder(encoder, "The animal didn't cross the street.")
    run = encoder.run("The animal didn't cross the street.")
    steps = encoder.head_steps(run, 2, 7)
    assert ours.queries.shape == (6, 12, run.n_tokens, 32) and ours.keys.shape == ours.queries.shape
    assert torch.equal(ours.queries[2, 7], steps.q) and torch.equal(ours.keys[2, 7], steps.k)
    assert (ours.model, ours.kind, ours.causal, ours.tokens) == ("all-MiniLM-L6-v2", "self", False, run.tokens)
    folder = str(model_dir())
    bert = hf().BertModel.from_pretrained(folder)
    theirs = capture(bert, hf().AutoTokenizer.from_pretrained(folder), run.text)["self"]
    assert theirs.tokens == ours.tokens
    assert (theirs.attentions - ours.attentions).abs().max() <= 1e-5
    assert_near(theirs.queries, ours.queries)  # two layers of two implementations: float32's pair follows the sizes
    assert_near(theirs.keys, ours.keys)
    assert load("minilm.safetensors", file_bytes(ours)).has_qk


def test_a_trained_decoder_gives_its_own_causal_weights_and_queries_and_keys_that_give_them_back():
    from attnlab import trained

    decoder = trained.load("induction-2l")
    symbols = list("k3xmq7k3xm")
    ours = from_decoder(decoder, symbols)
    run = decoder.run(symbols)
    assert ours.tokens == tuple(run.tokens) and (ours.kind, ours.causal) == ("self", True)
    assert torch.equal(ours.attentions, torch.from_numpy(run.attentions))
    scores = ours.queries @ ours.keys.transpose(-1, -2) / ours.queries.size(-1) ** 0.5  # (L, H, T, T)
    future = torch.ones(len(run.tokens), len(run.tokens), dtype=torch.bool).triu(1)
    again = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    assert (again - ours.attentions).abs().max() <= 1e-5
    back = load("decoder.safetensors", file_bytes(ours))
    assert back.causal and back.has_qk and torch.equal(back.attentions, ours.attentions)
