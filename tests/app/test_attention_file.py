"""The Attention file page: the bundled example and uploads (self, causal, cross, with and without queries and keys),
hostile files refused in the user's language, every view in both languages, a download that loads back."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import safetensors.torch
import torch

from attnlab import attnfile
from attnlab.attnexamples import EXAMPLES
from attnlab.qkmap import agreement, qk_map
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.attention_file.source import VIEWS
from tests.app.charts import figures, heatmap_values
from tests.app.conftest import assert_clean, open_page, texts
from tests.conftest import REFERENCE_GROUP
from tests.unit.test_attnfile_grouped import grouped

PAGE = "views/attention_file.py"
CHARTS = {"model": 1, "head": 2, "qk": 1, "finder": 1, "rollout": 2}
MIME = "application/octet-stream"


def file_bytes(tmp_path, attentions, tokens, tokens_k=None, **kw) -> bytes:
    """What attnfile.save writes for these arrays."""
    path = tmp_path / "a.safetensors"
    attnfile.save(path, attentions, tokens, tokens_k, **kw)
    return path.read_bytes()


def softmax(scores: torch.Tensor) -> torch.Tensor:
    """Row softmax (NaN-free: no row here is fully blocked)."""
    return torch.softmax(scores, dim=-1)


def random_self(t: int = 6, layers: int = 2, heads: int = 3, d: int = 4, causal: bool = False, seed: int = 0):
    """A self-attention file's arrays whose weights are the softmax of its own queries and keys."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(layers, heads, t, d, generator=g), torch.randn(layers, heads, t, d, generator=g)
    scores = q @ k.transpose(-1, -2) / d**0.5
    if causal:
        scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
    tokens = [f"w{i}" for i in range(t)]
    return softmax(scores), tokens, q, k


def upload(at, name: str, data: bytes):
    """Give the page's uploader one file and rerun."""
    at.file_uploader[0].set_value((name, data, MIME))
    return at.run()


def open_upload(lang: str = "en", **query: str):
    """The page with the upload source picked."""
    return open_page(PAGE, source="upload", lang=lang, **query)


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_of_the_example_draws_in_both_languages(view, lang):
    at = open_page(PAGE, view=view, lang=lang)
    assert_clean(at)
    assert len(at.get("plotly_chart")) == CHARTS[view]
    assert not texts(at, "warning") and not texts(at, "error")
    shown = " ".join(m.value for m in at.markdown)
    assert "all-MiniLM-L6-v2" in shown and "(6, 12, 16, 32)" in shown
    assert catalog(lang)["attnfile.kind_self"] in shown


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_of_the_trained_decoder_example_draws_in_both_languages(view, lang):
    at = open_page(PAGE, source="decoder", view=view, lang=lang)  # no text in the link: the example's own symbols
    assert_clean(at)
    assert at.text_input(key="attnfile.text").value == EXAMPLES["decoder"].text
    assert len(at.get("plotly_chart")) == CHARTS[view]
    assert not texts(at, "warning") and not texts(at, "error")
    shown = " ".join(m.value for m in at.markdown)
    assert "induction-2l" in shown and "(2, 4, 19, 16)" in shown
    assert catalog(lang)["attnfile.kind_causal"] in shown


def test_the_decoder_example_shows_the_decoders_own_causal_weights():
    from attnlab import trained

    symbols = "a b c a b c a b".split()
    at = open_page(PAGE, source="decoder", view="head", layer="2", head="1", text=" ".join(symbols))
    expected = trained.load("induction-2l").run(symbols).attentions[1, 0]  # (T, T)
    assert np.allclose(heatmap_values(at, 0)[0], expected, atol=1e-6)


@pytest.mark.parametrize(
    ("text", "key", "shown"),
    [
        ("k 3 <b>!</b>", "decoder.unknown", "`<b>!</b>`"),
        ("   ", "decoder.empty", None),
        ("a " * 65, "decoder.too_long", "65"),
    ],
)
def test_symbols_the_decoder_cannot_read_are_refused_in_the_users_language_and_kept(text, key, shown, lang):
    at = open_page(PAGE, source="decoder", text=text, lang=lang)
    assert_clean(at)
    errors = texts(at, "error")
    assert len(errors) == 1 and catalog(lang)[key].split("{")[0] in errors[0]
    assert shown is None or shown in errors[0]
    assert at.text_input(key="attnfile.text").value == text and not at.get("plotly_chart")


@pytest.mark.parametrize("name", ["en", "zh"])
def test_the_language_model_examples_open_with_rotated_grouped_queries_and_keys(name, lang):
    from attnlab import lm
    from attnlab.attnexamples import LM_MAX_TOKENS

    model = lm.load(name)
    at = open_page(PAGE, source=f"lm_{name}", view="qk", lang=lang)
    assert_clean(at)
    text = EXAMPLES[f"lm_{name}"].text
    assert at.text_input(key="attnfile.text").value == text and not texts(at, "warning") and not texts(at, "error")
    assert len(at.get("plotly_chart")) == CHARTS["qk"] and LM_MAX_TOKENS == model.max_len
    shown = " ".join(m.value for m in at.markdown)
    layers, heads, kv_heads = (
        model.config[k] for k in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads")
    )
    t = len(model.encode(text))
    assert f"queries: ({layers}, {heads}, {t}, " in shown and f"keys: ({layers}, {kv_heads}, {t}, " in shown
    assert catalog(lang)["attnfile.grouped"].split("{")[0] in shown
    file = EXAMPLES[f"lm_{name}"].build(text)
    weights = model.forward(torch.tensor([model.encode(text)])).attentions  # the model's own pass, per layer
    assert torch.allclose(file.attentions, torch.stack([w[0] for w in weights]), atol=1e-6)


def test_characters_a_language_model_lacks_are_named_and_read_as_unk(lang):
    at = open_page(PAGE, source="lm_en", text="In the beginning ☃ was <b>", lang=lang)
    assert_clean(at)
    (warning,) = texts(at, "warning")
    assert "`☃`" in warning and "`<`" in warning and not texts(at, "error") and at.get("plotly_chart")


def test_picking_another_example_starts_its_text_box_from_that_examples_input():
    at = open_page(PAGE, lang="en")
    at.button_group(key="attnfile.source").set_value("decoder").run()
    assert_clean(at)
    assert at.text_input(key="attnfile.text").value == EXAMPLES["decoder"].text and not texts(at, "error")
    at.button_group(key="attnfile.source").set_value("minilm").run()
    assert at.text_input(key="attnfile.text").value == EXAMPLES["minilm"].text


def test_the_example_head_view_shows_the_models_own_weights():
    at = open_page(PAGE, view="head", layer="3", head="7")
    file = EXAMPLES["minilm"].build(EXAMPLES["minilm"].text)
    assert np.allclose(heatmap_values(at, 0)[0], file.attentions[2, 6].numpy(), atol=1e-6)


def test_an_uploaded_self_file_with_queries_and_keys_draws_its_map_and_agreement(tmp_path, lang):
    weights, tokens, q, k = random_self()
    at = open_upload(lang, view="qk", layer="2", head="3", q="4")
    at = upload(at, "mine.safetensors", file_bytes(tmp_path, weights, tokens, model="tiny", queries=q, keys=k))
    assert_clean(at)
    assert not texts(at, "error")
    found = agreement(qk_map(q[1, 2].numpy(), k[1, 2].numpy()), weights[1, 2].numpy(), 3)
    shown = {m.label: m.value for m in at.metric}
    assert shown[catalog(lang)["qk.rho"]] == f"{found.spearman:.2f}"
    assert shown[catalog(lang)["qk.overlap"].format(n=3)] == f"{found.overlap} / 3"
    points = [tr for tr in figures(at)[0]["data"] if tr.get("customdata")]
    assert [len(tr["x"]) for tr in points] == [6, 6]  # six queries, six keys


def test_a_causal_file_is_called_causal_and_keeps_rollout(tmp_path, lang):
    weights, tokens, _, _ = random_self(causal=True)
    at = upload(open_upload(lang, view="rollout"), "gpt.safetensors", file_bytes(tmp_path, weights, tokens))
    assert_clean(at)
    assert catalog(lang)["attnfile.kind_causal"] in " ".join(m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 2


def test_a_cross_file_puts_target_left_source_right_and_has_no_rollout(tmp_path, lang):
    g = torch.Generator().manual_seed(1)
    weights = softmax(torch.randn(2, 2, 3, 5, generator=g))  # 3 target tokens look at 5 source tokens
    target, source = ["<s>", "Hallo", "Welt"], ["Hello", "world", "!", "ok", "</s>"]
    data = file_bytes(tmp_path, weights, target, source, model="marian")
    at = upload(open_upload(lang, view="head", k="2"), "cross.safetensors", data)
    assert_clean(at)
    words = catalog(lang)
    assert words["attnfile.kind_cross"] in " ".join(m.value for m in at.markdown)
    assert np.allclose(heatmap_values(at, 0)[0], weights[0, 0].numpy(), atol=1e-6)
    lines = figures(at)[1]
    sides = [a["text"] for a in lines["layout"]["annotations"]]
    assert words["attnfile.target"] in sides[0] and words["attnfile.source_side"] in sides[1]
    drawn = [tr for tr in lines["data"] if tr.get("mode") == "lines"]
    assert all(y == 1 for tr in drawn for y in tr["y"][1::3])  # following key 2: every line ends on it
    assert [o for o in at.get("button_group")[-1].proto.options] and len(at.get("plotly_chart")) == 2
    view_labels = [o.content for o in at.get("button_group")[-1].proto.options]
    assert words["attnfile.view_rollout"] not in view_labels and words["attnfile.view_qk"] not in view_labels


def test_a_link_to_a_view_the_file_cannot_show_says_so_and_shows_the_model(tmp_path, lang):
    weights, tokens, _, _ = random_self()
    at = upload(open_upload(lang, view="qk"), "noqk.safetensors", file_bytes(tmp_path, weights, tokens))
    assert_clean(at)
    assert any(catalog(lang)["attnfile.view_qk"] in i for i in texts(at, "info"))
    assert at.query_params["view"] == "model" and len(at.get("plotly_chart")) == 1


def test_a_layer_past_the_files_end_is_said_and_replaced(tmp_path):
    weights, tokens, _, _ = random_self(layers=2)
    at = upload(open_upload(view="head", layer="9"), "small.safetensors", file_bytes(tmp_path, weights, tokens))
    assert_clean(at)
    assert any("layer=9" in i for i in texts(at, "info"))
    assert at.query_params["layer"] == "1"


HOSTILE = {
    "garbage": b"\x00\x01not a safetensors file at all",
    "pickle": pickle.dumps({"attentions": [[1.0]]}),
    "empty": b"",
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_files_are_refused_in_the_users_language(kind, lang):
    name = "[click](http://evil.example) <b>x</b>.safetensors"
    at = upload(open_upload(lang), name, HOSTILE[kind])
    assert_clean(at)
    errors = texts(at, "error")
    assert len(errors) == 1
    assert errors[0].startswith(catalog(lang)["attnfile.refused"].split("{name}")[0])
    assert "`[click](http://evil.example) <b>x</b>.safetensors`" in errors[0]  # the name only as inert code
    assert not at.get("plotly_chart")


def test_a_file_with_nan_weights_is_refused_not_drawn(tmp_path, lang):
    weights, tokens, _, _ = random_self()
    good = file_bytes(tmp_path, weights, tokens)
    meta = json.loads(good[8 : 8 + int.from_bytes(good[:8], "little")])["__metadata__"]
    weights[0, 0, 0, 0] = float("nan")  # save refuses this, so the file is written around it
    at = upload(open_upload(lang), "nan.safetensors", safetensors.torch.save({"attentions": weights}, metadata=meta))
    assert_clean(at)
    assert len(texts(at, "error")) == 1 and not at.get("plotly_chart")
    reason = catalog(lang)["attnfile_errors.not_finite"].split("{name}")[-1].split("{cell}")[0]
    assert reason in texts(at, "error")[0]  # the loader's own reason, translated


def test_the_download_loads_back_to_the_same_numbers():
    at = open_page(PAGE)
    button = at.get("download_button")[0]
    assert button
    file = EXAMPLES["minilm"].build(EXAMPLES["minilm"].text)
    back = attnfile.load("attention.safetensors", attnfile.file_bytes(file))
    assert torch.equal(back.attentions, file.attentions) and list(back.tokens) == list(file.tokens)
    assert torch.equal(back.queries, file.queries) and torch.equal(back.keys, file.keys)
    assert back.model == file.model


@pytest.mark.parametrize("view", ["qk", "head"])
def test_palette_cb_colours_the_map_and_the_lines(view):
    from attnlab.figures.palette import COLOUR_BLIND
    from tests.app.test_palette import colours, scales, used

    at = open_page(PAGE, view=view, q="3", palette="cb")
    assert_clean(at)
    for fig in figures(at):
        found_scales, found_colours = used(fig)
        assert found_scales <= scales(COLOUR_BLIND) and found_colours <= colours(COLOUR_BLIND)


def tiny_bart():
    """A random BART small enough to build in the test (nothing downloaded) and a tokenizer-like callable."""
    transformers = pytest.importorskip("transformers")
    config = transformers.BartConfig(
        vocab_size=40,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return transformers.BartForConditionalGeneration(config).eval()


class WordTokenizer:
    """A tokenizer shaped like transformers' (call -> input_ids, convert_ids_to_tokens), one id per word."""

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def __call__(self, text, return_tensors="pt", **kw):
        ids = torch.tensor([[self.words.index(w) for w in text.split()]])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    def convert_ids_to_tokens(self, ids):
        return [self.words[int(i)] for i in ids]


@REFERENCE_GROUP
def test_every_part_of_a_captured_encoder_decoder_opens_with_its_kind(lang):
    words = ["<s>", "</s>", "the", "cat", "sat", "die", "Katze", "sass"]
    parts = attnfile.capture(tiny_bart(), WordTokenizer(words), "<s> the cat sat </s>", target="<s> die Katze sass")
    assert set(parts) == {"encoder", "decoder", "cross"}
    for name, part in parts.items():
        at = upload(open_upload(lang, view="head"), f"{name}.safetensors", attnfile.file_bytes(part))
        assert_clean(at)
        assert catalog(lang)[f"attnfile.kind_{name}"] in " ".join(m.value for m in at.markdown)
        assert len(at.get("plotly_chart")) == 2


def test_a_grouped_windowed_file_names_the_key_head_each_query_head_reads(lang):
    """A query head's map holds the keys of its key/value head; the page states the grouping, the rule, post-RoPE."""
    f = grouped()  # 4 query heads on 2 key/value heads; layer 2 soft-capped, with a window of 3
    at = open_upload(lang, view="qk", layer="2", head="4", q="6")
    at = upload(at, "llama.safetensors", attnfile.file_bytes(f))
    assert_clean(at)
    words = catalog(lang)
    shown = " ".join(m.value for m in at.markdown)
    assert words["attnfile.grouped"].format(heads=4, kv_heads=2, group=2) in shown
    assert words["attnfile.rule_window"].format(window=3, layers="2") in shown
    captions = " ".join(c.value for c in at.caption)
    assert words["qk.as_scored"] in captions and words["qk.window"].format(window=3) in captions
    assert words["qk.kv_head"].format(head=4, kv=2, kv_heads=2, first=3, last=4) in captions
    found = agreement(qk_map(f.queries[1, 3].numpy(), f.keys[1, 1].numpy()), f.attentions[1, 3].numpy(), 5, True, 3, 3)
    assert {m.label: m.value for m in at.metric}[words["qk.rho"]] == f"{found.spearman:.2f}"


def test_a_capture_that_kept_no_queries_and_keys_says_why(lang):
    f = grouped()
    declined = attnfile.to_bytes(f.attentions, f.tokens, qk_declined="extra_scores")
    at = upload(open_upload(lang), "t5.safetensors", declined)
    assert_clean(at)
    words = catalog(lang)
    reason = words["attnfile.declined"].format(reason=words["attnfile.declined_extra_scores"])
    assert reason in " ".join(m.value for m in at.markdown)
