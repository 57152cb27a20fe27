"""The Multi-head page through AppTest: both languages, URL state, widgets, bad dropout p and head counts."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from attnlab.anatomy.heads import multi_head_with_torch
from attnlab.links.explore import MULTIHEAD_SECTIONS
from attnlab.pipeline import LabConfig, run_lab
from attnlab.testing import app_test

from .conftest import assert_clean, markdown_tables, open_page, texts

PAGE = "views/multihead.py"
EVERY_SECTION = ",".join(MULTIHEAD_SECTIONS)  # sections 4 to 10, folded until opened (issue 61)


def visit(page: str = PAGE, **query: str) -> AppTest:
    """A visitor of `/<page>?<query>`, with every folded section open unless the link says which."""
    return open_page(page, **{"open": EVERY_SECTION, **query})


def charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def test_default_page_in_both_languages(lang):
    at = visit(lang=lang)
    assert_clean(at)
    title = {"en": "Multi-head attention, opened up", "zh": "拆开看多头注意力"}[lang]
    assert at.title[0].value == title
    assert charts(at) == 14  # 11, and the MHA/GQA/MQA section's three
    assert len(texts(at, "success")) == 2 and not texts(at, "error")  # fused check and nn.MultiheadAttention check
    assert at.query_params["p"] == "0" and at.query_params["cmp"] == "1" and at.query_params["lang"] == lang


def test_url_state_gives_the_same_dropout_numbers():
    query = dict(text="I like you", d_model="4", heads="2", seed="3", causal="true", p="0.5", dseed="11")
    at = visit(**query)
    assert_clean(at)
    result = run_lab(LabConfig(text="I like you", d_model=4, heads=2, causal=True, seed=3))
    run = multi_head_with_torch(result.x, result.weights, 2, is_causal=True, dropout_p=0.5, seed=11)
    info = " ".join(texts(at, "info"))
    assert f"set {run.zeroed} of 18 weights to 0" in info and "= 2" in info
    assert at.text_input(key="mh.p").value == "0.5"
    assert charts(at) == 15  # the dropped weights join the page
    assert {k: at.query_params[k] for k in query} == query


@pytest.mark.parametrize(
    ("raw", "lang", "needle"),
    [("1.5", "en", "outside [0, 1)"), ("abc", "zh", "不是数字"), ("1", "zh", "不在 [0, 1) 之内")],
)
def test_bad_dropout_p_is_named_and_kept(raw, lang, needle):
    at = visit(p=raw, lang=lang)
    assert_clean(at)
    errors = texts(at, "error")
    assert len(errors) == 1 and needle in errors[0]
    assert raw in re.sub(r"\\", "", errors[0])  # what was typed is quoted
    assert at.text_input(key="mh.p").value == raw  # and kept in the box
    assert at.query_params["p"] == raw
    assert len(texts(at, "success")) == 2  # the rest of the page still works, dropout off


def test_heads_and_compare_count_that_do_not_divide(lang):
    at = visit(heads="3", cmp="5", lang=lang)
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 2 and all("3" in w or "5" in w for w in warnings)
    assert at.query_params["heads"] == "2" and at.query_params["cmp"] == "4"


def test_widgets_resplit_enlarge_and_dropout():
    at = visit()
    at.selectbox(key="lab.heads").set_value(4).run()
    assert_clean(at)
    assert at.query_params["heads"] == "4"
    at.selectbox(key="mh.cmp").set_value(2)
    at.segmented_control(key="lab.head").set_value(3)
    at.text_input(key="mh.p").set_value("0.25").run()
    assert_clean(at)
    assert at.query_params["cmp"] == "2" and at.query_params["p"] == "0.25"
    assert any("1/(1 − p) = 1.333" in s for s in texts(at, "info"))
    weights_chart = at.get("plotly_chart")
    assert charts(at) == 15 and weights_chart
    assert "Head 3" in " ".join(str(c.proto.spec) for c in weights_chart)  # the enlarged head is titled


def test_reflects_the_playground_after_navigation():
    at = app_test(60)
    at.query_params["text"] = "hello big world"
    at.query_params["d_model"] = "4"
    at.run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert at.text_input(key="lab.text").value == "hello big world"
    assert at.query_params["text"] == "hello big world" and at.query_params["d_model"] == "4"


def test_full_size_section_cuts_512_into_8_heads_of_64(lang):
    at = visit(lang=lang)
    assert_clean(at)
    code = at.main.code[-1].value
    assert "(6, 512)" in code and "(8, 6, 64)" in code and "d_k = 64" in code and "1,048,576" in code
    at.number_input(key="mh.full_d").set_value(768).run()
    at.selectbox(key="mh.full_h").set_value(12).run()
    assert "(12, 6, 64)" in at.main.code[-1].value and at.query_params["full_h"] == "12"


def test_full_size_heads_that_do_not_divide_in_the_link_are_named():
    at = visit(full_d="512", full_h="7")
    assert_clean(at)
    assert any("full_h=7" in w for w in texts(at, "warning"))
    assert at.session_state["mh.full_h"] == 4


BIG = " ".join(f"w{i}" for i in range(64))  # 64 tokens


def test_the_default_link_folds_sections_4_to_10_and_an_opened_one_joins_the_link(lang):
    """Sections 4 to 10 wait, folded under their titles, for a click: the default link draws the first three sections'
    4 charts; an opened section draws its own (section 6: W_QKV and the fused check), stays open and is named in the
    link, and a link that names it opens it."""
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    assert charts(at) == 4 and not texts(at, "success") and at.query_params["open"] == ""
    labels = [box.label for box in at.main.expander]
    assert [label.split(".")[0] for label in labels] == [str(n) for n in range(4, 11)]
    at.session_state["mh.open.fused"] = True
    at.run()
    assert_clean(at)
    assert charts(at) == 5 and len(texts(at, "success")) == 1  # W_QKV, and the fused product's check
    at.run()
    assert charts(at) == 5 and at.query_params["open"] == "fused"  # it stays open, and the link says so
    shared = open_page(PAGE, lang=lang, open="fused")
    assert charts(shared) == 5 and len(texts(shared, "success")) == 1


def test_a_link_that_opens_an_unknown_section_says_so_and_opens_the_known_ones():
    at = open_page(PAGE, open="fused,nope")
    assert_clean(at)
    assert any("`open=fused,nope`" in w for w in texts(at, "warning"))
    assert charts(at) == 5 and at.query_params["open"] == "fused"


def test_a_folded_sections_settings_stay_in_the_link_and_reach_pytorchs_check():
    """Dropout's p and seed, from a link, while section 7 is shut: kept in the link, and used by section 8."""
    query = dict(text=BIG, d_model="64", heads="8", causal="true", p="0.25", dseed="5", open="")
    at = visit(**query)
    at.run()
    assert {k: at.query_params[k] for k in query} == query
    at.session_state["mh.open.torch"] = True
    at.run()
    assert_clean(at)
    _, *rows = markdown_tables(at)[0]  # the check table: what was compared ↔ against what, max |Δ|
    assert "nn.MultiheadAttention" in rows[0][0] and "dropout p = 0.25" in rows[0][0]
    assert {k: at.query_params[k] for k in query} == query | {"open": "torch"}
