"""The Playground's modern settings through AppTest (contract 13): the controls, the link, the bad inputs, the stages
that show RoPE, ALiBi, shared key/value heads and the mask's rule, and the pages that key on the stage table."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.masks import END_OF_DOCUMENT
from attnlab.pipeline import LabConfig, run_lab
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.text import code
from tests.app.charts import blocked_cells, heatmap_values
from tests.app.conftest import assert_clean, open_page, texts
from tests.conftest import REFERENCE_GROUP

PACKED = "<BOS> I like you <EOS> <BOS> you like me <EOS>"
MODERN = dict(text=PACKED, heads="4", kv_heads="2", rope="half", alibi="true", mask="documents")
K, ROTATION, ANGLES, SCORES, ALIBI, MASKED = 2, 4, 5, 6, 8, 9  # chart order: RoPE inside scores, ALiBi inside mask


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("lang", ["zh"])  # the other tests here run in English
def test_a_modern_link_draws_every_stage_with_its_rotation_bias_shared_heads_and_rule(lang):
    at = open_page(lang=lang, **MODERN)
    assert_clean(at)
    words = catalog(lang)
    result = run_lab(LabConfig(PACKED, 8, 4, kv_heads=2, rope="half", alibi=True, mask="documents"))
    assert len(at.get("plotly_chart")) == 11 + 3 and words["lab.check_pass"] in texts(at, "success")
    np.testing.assert_allclose(heatmap_values(at, K)[0], result.steps.k.numpy())  # only the 2 shared heads: (10, 4)
    rotation = heatmap_values(at, ROTATION)
    np.testing.assert_allclose(rotation[0], result.steps.q_unrotated[0].numpy())
    np.testing.assert_allclose(rotation[3], result.steps.k_shared[0].numpy())
    assert heatmap_values(at, ANGLES)[0].shape == (10, 1)  # d_k = 2: one pair per head
    np.testing.assert_allclose(heatmap_values(at, ALIBI)[0], result.steps.alibi[0].numpy())
    blocked = ~result.rule.mask.numpy()
    assert all((cells == blocked).all() for cells in blocked_cells(at, MASKED))
    said = captions(at)
    assert words["stages.kv_group"].format(kv=2, heads="3–4") in said  # query heads 3 and 4 share K/V head 2
    assert words["stages.rule_count"].format(allowed=30, total=100, share="30%") in said
    assert words["stages.rope_half"].format(d_k=2, half=1) in said
    assert all(at.query_params[name] == value for name, value in MODERN.items())
    assert at.query_params["causal"] == "true"  # documents never show a later key


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_modern_values_are_replaced_and_said_and_the_rest_is_kept(lang):
    at = open_page(lang=lang, text="a b c", d_model="6", heads="3", kv_heads="2", rope="half", window="0", mask="sinks")
    assert_clean(at)
    words = catalog(lang)
    warned = "\n".join(texts(at, "warning"))
    assert (
        words["lab.url_kv_heads_not_dividing"].format(asked=code("kv_heads=2"), used=code("1"), heads=code(3)) in warned
    )
    window = words["common.url_out_of_range"].format(asked=code("window=0"), used=code("1"), lo=code(1), hi=code(64))
    assert window in warned
    assert "rope" not in warned  # d_k = 2 is even: RoPE is honoured
    assert at.query_params["kv_heads"] == "1" and at.query_params["window"] == "1" and at.query_params["rope"] == "half"
    at = open_page(lang=lang, text="a b c", d_model="6", heads="2", rope="interleaved", mask="prefix", prefix="9")
    warned = "\n".join(texts(at, "warning"))
    assert words["lab.fallback_rope_odd"].format(asked=code("interleaved"), used=code("none"), d_k=code("3")) in warned
    assert words["lab.fallback_prefix_long"].format(asked=code("9"), used=code("3"), t=code("3")) in warned
    assert at.query_params["prefix"] == "9" and at.query_params["rope"] == "interleaved"  # what was typed stays
    at = open_page(lang=lang, text="no separator here", mask="documents", causal="false")
    warned = "\n".join(texts(at, "warning"))
    assert (
        words["lab.fallback_documents_one"].format(
            asked=code("documents"), used=code("causal"), end=code(END_OF_DOCUMENT)
        )
        in warned
    )
    assert (
        words["lab.url_causal_vs_mask"].format(
            asked=code("causal=false"), mask=code("mask=documents"), used=code("true")
        )
        in warned
    )
    assert_clean(at)


def test_the_mask_picker_and_the_causal_switch_follow_each_other_and_kv_heads_follow_heads():
    at = open_page(heads="4")
    at.selectbox(key="lab.mask").set_value("window").run()
    assert at.toggle(key="lab.causal").value and at.query_params["mask"] == "window"
    assert at.number_input(key="lab.window").value == 3
    assert blocked_cells(at, 6)[0].sum() == 36 - 15  # a window of 3 over 6 tokens lets 15 pairs through
    at.toggle(key="lab.causal").set_value(False).run()
    assert at.selectbox(key="lab.mask").value == "full" and not blocked_cells(at, 6)
    at.selectbox(key="lab.kv_heads").set_value(1).run()
    assert at.query_params["kv_heads"] == "1" and heatmap_values(at, 2)[0].shape == (6, 2)
    at.selectbox(key="lab.heads").set_value(2).run()  # one key/value head still divides two heads
    assert at.query_params["kv_heads"] == "1"
    at.selectbox(key="lab.kv_heads").set_value(2).run()
    at.selectbox(key="lab.heads").set_value(4).run()  # one per head before: one per head after
    assert at.query_params["kv_heads"] == "4"
    assert_clean(at)


def test_the_presenter_and_what_if_carry_the_modern_settings(lang):
    at = open_page("views/present.py", lang=lang, step="5", **MODERN)
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 3  # the rotation, the angles, then the scores
    at = open_page(lang=lang, compare="kv_heads", text="I like you", heads="4", rope="half")
    assert_clean(at)
    words = catalog(lang)
    assert words["present.whatif.shapes_differ"].format(this=8, other=4) in captions(at)
    at.selectbox(key="whatif.compare").set_value("window").run()
    assert_clean(at)
    assert words["present.whatif.mask_changed"] in captions(at)


@REFERENCE_GROUP  # FlexAttention's first eager trace takes seconds: the references' worker pays it once
def test_flex_attention_checks_the_same_run_when_asked():
    at = open_page(**MODERN)
    assert not [m for m in at.sidebar.markdown if "Flex" in m.value]  # not on every change: asked for
    at.toggle(key="lab.check_flex").set_value(True).run()
    assert_clean(at)
    table = next(m.value for m in at.sidebar.markdown if "SDPA" in m.value)
    assert table.count("↔ Flex") == 4 and "SDPA · W" in table
    assert catalog("en")["lab.check_pass"] in texts(at, "success")


def test_uploaded_grouped_weights_set_the_key_value_heads_and_travel_in_the_link():
    from attnlab.multihead import MultiHeadWeights
    from attnlab.weights_io import to_json

    uploaded = MultiHeadWeights.random(8, seed=99, n_heads=4, n_kv_heads=1)  # W_K, W_V: 8 x 2, one shared head
    at = open_page(heads="2")
    at.toggle(key="lab.editor_open").set_value(True).run()
    at.file_uploader(key="lab.upload").set_value(("mine.json", to_json(uploaded), "application/json")).run()
    assert_clean(at)
    assert at.query_params["heads"] == "4" and at.query_params["kv_heads"] == "1"  # whole groups of 4 query heads
    x = run_lab(LabConfig(heads=4, kv_heads=1)).x
    np.testing.assert_allclose(heatmap_values(at, K)[0], (x @ uploaded.w_k).numpy())
    shared = open_page(**{k: at.query_params[k] for k in at.query_params})  # the edited cells fit in the link
    np.testing.assert_allclose(heatmap_values(shared, K)[0], heatmap_values(at, K)[0])
