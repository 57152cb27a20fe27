"""The Cross-attention page through AppTest: both languages, URL state, widgets and every bad input."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attnlab.anatomy.cross import CrossConfig, run_cross

from .conftest import assert_clean, markdown_tables, open_page, texts

PAGE = "views/cross.py"


def visit(**query: str) -> AppTest:
    """A visitor of this page's URL with `query`, sections 4 and 5 open unless the link says (folded until opened)."""
    return open_page(PAGE, **{"open": "bottleneck,check", **query})


def charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def test_default_page_in_both_languages(lang):
    at = visit(lang=lang)
    assert_clean(at)
    assert (
        at.title[0].value
        == {"en": "Cross-attention: a decoder reads the source", "zh": "交叉注意力：解码器读取源句"}[lang]
    )
    assert charts(at) == 6
    assert len(texts(at, "success")) == 1 and not texts(at, "warning")
    folded = open_page(PAGE, lang=lang)  # the default link: sections 4 and 5 folded under their titles
    assert charts(folded) == 5 and not markdown_tables(folded) and folded.query_params["open"] == ""
    assert [box.label.split(".")[0] for box in folded.main.expander] == ["4", "5"]
    assert at.query_params["pad"] == "4,5" and at.query_params["causal"] == "true"
    assert len(markdown_tables(at)) == 2 and not at.dataframe  # the bottleneck and the check: markdown, no data grid


def test_url_state_gives_the_same_bottleneck_numbers():
    query = dict(src="the cat sat", tgt="le chat est assis", causal="false", pad="1", d_model="6", heads="3", seed="5")
    at = visit(**query)
    assert_clean(at)
    result = run_cross(CrossConfig("the cat sat", "le chat est assis", False, (1,), 6, 3, 5))
    header, *rows = markdown_tables(at)[0]
    assert header[1] == "|c_i − c|" and [row[1] for row in rows] == [f"{d:.3f}" for d in result.bottleneck.distance]
    assert {k: at.query_params[k] for k in query} == query
    assert at.multiselect(key="cross.pad").value == [1]


def test_padding_that_hides_every_source_token(lang):
    at = visit(src="a b", tgt="x y z", pad="0,1", lang=lang)
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 2  # the mask hides everything; every row saw nothing
    assert any(("0" in w and ("output" in w or "输出" in w)) for w in warnings)
    assert len(texts(at, "info")) == 2  # no fixed context; nn.MultiheadAttention gives NaN here
    assert "NaN" in [row[1] for row in markdown_tables(at)[0]]  # the check's max |Δ| for nn.MultiheadAttention


def test_empty_texts_are_named_and_kept(lang):
    at = visit(src="   ", tgt="", lang=lang)
    assert_clean(at)
    assert len(texts(at, "info")) == 2 and charts(at) == 0
    assert at.text_input(key="cross.src").value == "   "


def test_over_the_cap_and_bad_url_values():
    at = visit(src=" ".join(["w"] * 70), heads="3", pad="x,1", causal="maybe")
    assert_clean(at)
    warnings = " ".join(texts(at, "warning"))
    assert "70 tokens" in warnings and "first 64" in warnings
    assert "heads" in warnings and "pad=x,1" in warnings and "causal=maybe" in warnings
    assert at.query_params["heads"] == "2" and at.query_params["pad"] == "4,5"


def test_widgets_change_the_matrices():
    at = visit()
    at.text_input(key="cross.src").set_value("one two")
    at.toggle(key="cross.causal").set_value(False)
    at.number_input(key="cross.d_model").set_value(6).run()
    assert_clean(at)
    assert at.query_params["src"] == "one two" and at.query_params["causal"] == "false"
    assert at.query_params["heads"] == "2" and at.query_params["pad"] == ""  # 4 and 5 are past the end now
    assert any("4, 5" in c.value for c in at.caption)
    at.multiselect(key="cross.pad").set_value([0])
    at.selectbox(key="cross.heads").set_value(3).run()
    assert_clean(at)
    assert at.query_params["pad"] == "0" and at.query_params["heads"] == "3"
    assert charts(at) == 6
