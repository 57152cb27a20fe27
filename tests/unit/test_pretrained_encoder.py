"""Contract 5: all-MiniLM-L6-v2 through our attention against transformers' BertModel and SentenceTransformer.

The references load once per module, offline, from the same package folder our loader reads. They see the
same cap as we do: the tokenizer truncates to max_tokens, and SentenceTransformer's max_seq_length (256 for
this model) is set to the cap, so both sides embed the same tokens.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnlab.pretrained import MAX_TOKENS, EmptyText, Encoder, load_minilm, similarity
from attnlab.pretrained.package import model_dir
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near

pytestmark = REFERENCE_GROUP  # one worker imports the reference libraries, once

MIN_COSINE = 0.99999  # contract 5: our embedding against SentenceTransformer.encode
LONG = " ".join(["Attention lets every token look at every other token, near or far."] * 12)  # ~190 tokens
SENTENCES = [
    "Hello, world!",
    "The animal didn't cross the street because it was too tired.",
    "<BOS> I like you <EOS>",
    "Thinking Machines",
    "x",
    "the the the the the the the the",
    "In 2017, 8 heads × 64 = 512 dims; cost O(T²) 🚀🙂 #1 @home $3.50",
    "我爱机器学习",
    "Self-Attention（自注意力）机制是 Transformer 模型的核心组件之一。",
    "Attention is all you need 注意力就是你所需要的一切!",
    "Café naïve résumé — ÉCOLE",
    "مرحبا بالعالم",
    "<script>alert('hi')</script>",
    "a" * 150,  # a word longer than WordPiece's 100-character limit: one [UNK]
    LONG,
]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One intra-op thread while this module runs: on a busy 2-core machine torch's second thread spins and
    triples the wall time of these small matmuls (measured: 138 s -> 36 s for this module)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return load_minilm()


@pytest.fixture(scope="module")
def reference():
    """transformers' BertModel (eager attention, so it can return the maps), its tokenizer and SentenceTransformer.

    Imported here, offline, so that only this module pays for importing them and nothing can reach a model hub.
    """
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HF_HUB_OFFLINE", "1")
        env.setenv("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers import AutoTokenizer, BertModel

        folder = str(model_dir())
        bert = BertModel.from_pretrained(folder, attn_implementation="eager").eval()
        sbert = SentenceTransformer(folder, device="cpu")
        sbert.max_seq_length = MAX_TOKENS
        return AutoTokenizer.from_pretrained(folder), bert, sbert


def bert_reference(reference, text: str, max_tokens: int = MAX_TOKENS):
    """BertModel's tokens, attention maps (L, H, T, T) and hidden states (L + 1, T, D) for one text."""
    tokenizer, bert, _ = reference
    batch = tokenizer(text, return_tensors="pt", truncation=True, max_length=max_tokens)
    with torch.no_grad():
        out = bert(**batch, output_attentions=True, output_hidden_states=True)
    tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    return tuple(tokens), torch.stack(out.attentions)[:, 0], torch.stack(out.hidden_states)[:, 0]


@pytest.mark.parametrize("text", SENTENCES)
def test_forward_pass_matches_bert_model(encoder, reference, text):
    run = encoder.run(text)
    tokens, attentions, hidden = bert_reference(reference, text)
    assert run.tokens == tokens
    t = len(tokens)
    assert run.attentions.shape == (6, 12, t, t) and run.attentions.dtype == torch.float32
    assert run.hidden.shape == (7, t, 384) and run.hidden.dtype == torch.float32
    assert_near(run.attentions, attentions)
    assert_near(run.hidden, hidden)  # hidden states reach 10 and more: float32's pair follows them


@pytest.mark.parametrize("text", SENTENCES)
def test_embedding_matches_sentence_transformers(encoder, reference, text):
    run = encoder.run(text)
    expected = reference[2].encode(text, convert_to_tensor=True)
    assert run.embedding.shape == (384,)
    assert abs(run.embedding.norm().item() - 1) <= 1e-6
    assert F.cosine_similarity(run.embedding, expected, dim=0).item() >= MIN_COSINE


def test_sentence_transformers_own_cap_of_256_matches_max_tokens_256(encoder, reference):
    """With the model's own max_seq_length (256) on both sides the long text agrees too; our default cap is 128."""
    _, _, sbert = reference
    sbert.max_seq_length = 256
    try:
        expected = sbert.encode(LONG, convert_to_tensor=True)
    finally:
        sbert.max_seq_length = MAX_TOKENS
    run = encoder.run(LONG, max_tokens=256)
    assert not run.truncated and run.n_tokens > MAX_TOKENS
    assert F.cosine_similarity(run.embedding, expected, dim=0).item() >= MIN_COSINE


def test_similarity_matches_sentence_transformers_cos_sim(encoder, reference):
    from sentence_transformers.util import cos_sim

    a, b = "A man is playing a guitar.", "Someone plays an instrument."
    result = similarity(encoder, a, b)
    expected = cos_sim(*reference[2].encode([a, b], convert_to_tensor=True)).item()
    assert abs(result.cosine - expected) <= 1e-5
    assert result.a.tokens[1:3] == ("a", "man") and result.b.text == b
    assert similarity(encoder, a, a).cosine == pytest.approx(1.0, abs=1e-6)
    assert similarity(encoder, a, "The stock market fell today.").cosine < result.cosine


@pytest.mark.parametrize("text", ["The cat sat on the mat.", "我爱机器学习", LONG])
def test_head_steps_are_the_run_attention_maps(encoder, text):
    """Each real head recomputed from its columns of W_Q, W_K, W_V and biases gives the run's map."""
    run = encoder.run(text)
    w = encoder.weights.layers[4].attention
    for layer in range(encoder.n_layers):
        for head in range(encoder.n_heads):
            steps = encoder.head_steps(run, layer, head)
            assert_near(steps.weights, run.attentions[layer, head])
    steps = encoder.head_steps(run, 4, 7)
    cols = slice(7 * 32, 8 * 32)
    assert steps.q.shape == (run.n_tokens, 32) and steps.scale == pytest.approx(32**-0.5)
    assert_near(steps.k, run.hidden[4] @ w.w_k[:, cols] + w.b_k[cols])
    assert torch.allclose(steps.weights.sum(-1), torch.ones(run.n_tokens))


def test_layer_steps_recompute_the_run_exactly(encoder):
    run = encoder.run("Every stage of every real head can be opened.")
    t = run.n_tokens
    for layer in range(encoder.n_layers):
        steps = encoder.layer_steps(run, layer)
        assert torch.equal(steps.x, run.hidden[layer])
        assert torch.equal(steps.attention.heads.weights, run.attentions[layer])
        assert torch.equal(steps.output, run.hidden[layer + 1])
    steps = encoder.layer_steps(run, 2)
    w = encoder.weights.layers[2]
    assert steps.attention.concat.shape == (t, 384) and steps.ffn_hidden.shape == (t, 1536)
    assert torch.equal(steps.attention_residual, steps.x + steps.attention.output)
    assert_near(steps.attention.output, steps.attention.concat @ w.attention.w_o + w.attention.b_o)
    assert torch.equal(steps.ffn_activation, F.gelu(steps.ffn_hidden))
    assert torch.equal(steps.ffn_residual, steps.attention_norm + steps.ffn_output)
    normed = (steps.attention_norm - w.attention_norm.bias) / w.attention_norm.weight  # LayerNorm's zero mean, unit var
    assert normed.mean(-1).abs().max().item() <= 1e-4 and (normed.var(-1, correction=0) - 1).abs().max().item() <= 1e-3


def test_cap_keeps_cls_first_sep_last_and_counts_the_whole_text(encoder):
    run = encoder.run(LONG)
    assert run.n_tokens == MAX_TOKENS and run.truncated
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert run.full_length == len(encoder.tokenizer.encode(LONG).ids) > MAX_TOKENS
    assert run.tokens[1:-1] == encoder.run(LONG, max_tokens=512).tokens[1 : MAX_TOKENS - 1]
    short = encoder.run(LONG, max_tokens=3)
    assert short.tokens == ("[CLS]", "attention", "[SEP]") and short.attentions.shape == (6, 12, 3, 3)
    exact = encoder.run("one two three")
    assert exact.full_length == exact.n_tokens == 5 and not exact.truncated


@pytest.mark.parametrize("max_tokens", [2, 0, -1, 513])
def test_max_tokens_outside_what_the_model_can_take_is_refused(encoder, max_tokens):
    with pytest.raises(ValueError, match="max_tokens"):
        encoder.run("hello", max_tokens=max_tokens)


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "\u200b", "\u3000"])
def test_text_without_tokens_raises_empty_text(encoder, text):
    with pytest.raises(EmptyText):
        encoder.run(text)
    assert issubclass(EmptyText, ValueError)


def test_unknown_tokens_and_the_text_they_stand_for(encoder):
    run = encoder.run("I ❤ 我爱机器学习")
    assert run.tokens == ("[CLS]", "i", "[UNK]", "我", "[UNK]", "[UNK]", "[UNK]", "学", "[UNK]", "[SEP]")
    assert run.spans == ("", "I", "❤", "我", "爱", "机", "器", "学", "习", "")
    assert run.unknown == tuple(tok == "[UNK]" for tok in run.tokens) and sum(run.unknown) == 5


def test_wordpiece_pieces_and_lower_case(encoder):
    run = encoder.run("Tokenization isn't Unbelievable")
    assert run.tokens == ("[CLS]", "token", "##ization", "isn", "'", "t", "unbelievable", "[SEP]")
    assert run.spans[1:3] == ("Token", "ization")


@pytest.mark.parametrize("layer,head", [(-1, 0), (6, 0), (0, -1), (0, 12)])
def test_layer_or_head_outside_the_model_is_refused(encoder, layer, head):
    run = encoder.run("hello")
    with pytest.raises(IndexError):
        encoder.head_steps(run, layer, head)
    if head == 0:
        with pytest.raises(IndexError):
            encoder.layer_steps(run, layer)


def test_runs_leave_the_shared_weights_untouched(encoder):
    """One Encoder serves every session: a run, its steps and edits to a run's tensors never reach the weights."""
    tensors = [encoder.weights.embeddings.word, encoder.weights.layers[0].attention.w_q, encoder.weights.layers[5].b_2]
    before = [t.clone() for t in tensors]
    run = encoder.run("Shared by every session.")
    encoder.layer_steps(run, 0).attention.q.mul_(0)
    encoder.head_steps(run, 0, 0).k.add_(1)
    run.hidden.zero_()
    assert all(torch.equal(t, b) for t, b in zip(tensors, before, strict=True))
    assert encoder.run("Shared by every session.").hidden.abs().sum() > 0


def test_same_text_gives_the_same_numbers(encoder):
    a, b = encoder.run("Determinism matters."), encoder.run("Determinism matters.")
    assert torch.equal(a.attentions, b.attentions) and torch.equal(a.embedding, b.embedding)
