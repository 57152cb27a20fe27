"""The lesson pages through AppTest: both languages, the worked numbers they compute, URL state, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.lessons import dictionary, masking, positions, scaling
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.registry import COURSE
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, metric, open_page, texts


def heatmap(at, index: int) -> np.ndarray:
    """The z matrix of the first trace of one chart."""
    return _decode(figures(at)[index]["data"][0]["z"])


# --- overview --------------------------------------------------------------------------------------


def test_overview_orders_the_lessons_as_a_course(lang):
    at = open_page("views/lessons.py", lang=lang)
    assert_clean(at)
    cat = catalog(lang)
    assert at.title[0].value == cat["lessons.title"]
    headings = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert headings == [f"#### {cat[f'lesson_{c.lesson}.title']}" for c in COURSE]
    links = at.get("page_link")
    assert links[0].proto.page == "course"  # the one course list: the tasks, on these pages and more
    assert [link.proto.page for link in links[1:]] == [c.url_path for c in COURSE]  # the router's addresses
    assert at.query_params["lang"] == lang


# --- soft dictionary -------------------------------------------------------------------------------


def test_dictionary_defaults_compute_10_and_8(lang):
    at = open_page("views/soft_dictionary.py", lang=lang)
    assert_clean(at)
    assert not texts(at, "warning")
    assert metric(at, lang, "lesson_dictionary.hard_found", word="apple") == "10"
    assert metric(at, lang, "lesson_dictionary.weighted_value") == "8"
    assert any(r"0.6 \cdot 10 + 0.4 \cdot 5 + 0 \cdot 2 = 8" in x.value for x in at.latex)
    soft = dictionary.soft_lookup(dictionary.QUERY_VECTOR, dictionary.KEY_VECTORS, dictionary.VALUES, 1.0)
    assert metric(at, lang, "lesson_dictionary.soft_value") == f"{round(soft.value, 4):.10g}"
    bars = figures(at)[0]["data"][0]
    np.testing.assert_allclose(_decode(bars["y"]), soft.weights)
    assert len(at.get("plotly_chart")) == 3


def test_dictionary_widgets_change_every_number():
    at = open_page("views/soft_dictionary.py", lang="en")
    at.text_input(key="ldict.word").set_value("fruit")
    at.number_input(key="ldict.w_chair").set_value(0.5)
    at.number_input(key="ldict.v_banana").set_value(7.0)
    at.slider(key="ldict.temp").set_value(0.0)
    at.run()
    assert_clean(at)
    assert "`fruit` is not a key" in texts(at, "info")[0]
    assert metric(at, "en", "lesson_dictionary.weighted_value") == "9.8"  # 0.6*10 + 0.4*7 + 0.5*2
    assert any("1.5" in w for w in texts(at, "warning"))  # the weights no longer add up to 1
    assert metric(at, "en", "lesson_dictionary.soft_value") == "10"  # tau = 0: the hard lookup of apple
    assert at.query_params["word"] == "fruit" and at.query_params["temp"] == "0"


def test_dictionary_shared_url_reproduces_the_lookup():
    at = open_page(
        "views/soft_dictionary.py",
        lang="zh",
        w_apple="0.2",
        w_banana="0.8",
        v_chair="4",
        q="0, 1",
        k_chair="0, 3",
        temp="0.5",
    )
    assert_clean(at)
    assert not texts(at, "warning")
    assert metric(at, "zh", "lesson_dictionary.weighted_value") == "6"  # 0.2*10 + 0.8*5 + 0*4
    soft = dictionary.soft_lookup((0, 1), ((2, 1), (1.5, 1.5), (0, 3)), (10, 5, 4), 0.5)
    assert metric(at, "zh", "lesson_dictionary.soft_value") == f"{round(soft.value, 4):.10g}"
    assert metric(at, "zh", "lesson_dictionary.best_key") == "chair"


def test_dictionary_bad_url_and_typed_vectors_are_named_and_kept():
    at = open_page(
        "views/soft_dictionary.py", lang="en", w_apple="7", v_apple="abc", k_chair="1, <b>x</b>", q="1, 2, 3"
    )
    assert_clean(at)
    warnings = " ".join(texts(at, "warning"))
    assert "`w_apple=7`" in warnings and "`v_apple=abc`" in warnings
    assert "not a number" in warnings and "`1, <b>x</b>`" in warnings  # typed text shown as text, in a code span
    assert "has 2 numbers but the query has 3" in warnings
    assert at.text_input(key="ldict.k_chair").value == "1, <b>x</b>"  # what was typed is kept
    assert metric(at, "en", "lesson_dictionary.hard_found", word="apple") == "10"


# --- why sqrt(d_k) ---------------------------------------------------------------------------------


def test_scaling_variance_is_d_k_within_sampling_error(lang):
    at = open_page("views/scaling.py", lang=lang)
    assert_clean(at)
    assert not texts(at, "warning")
    curve = scaling.variance_curve(scaling.dk_grid(64), 4000, 0)
    i = list(curve.d_k).index(64)
    shown = float(metric(at, lang, "lesson_scaling.var_metric", dk=64))
    assert shown == pytest.approx(curve.var_raw[i], rel=1e-3)
    assert abs(shown - 64) < 5 * curve.std_err[i]
    var_fig = figures(at)[0]
    measured = next(tr for tr in var_fig["data"] if tr.get("error_y"))
    np.testing.assert_allclose(_decode(measured["x"]), curve.d_k)
    assert len(at.get("plotly_chart")) == 3


def test_scaling_unscaled_saturates_then_the_toggle_spreads_it():
    at = open_page("views/scaling.py", lang="en", dk="512", scaled="false", keys="16", seed="3")
    assert_clean(at)
    raw = scaling.one_query(512, 16, False, 3)
    assert float(metric(at, "en", "lesson_scaling.one_max")) == pytest.approx(raw.weights.max(), abs=1e-4)
    assert raw.weights.max() > 0.9
    at.toggle(key="lscale.scaled").set_value(True).run()
    scaled = scaling.one_query(512, 16, True, 3)
    assert float(metric(at, "en", "lesson_scaling.one_max")) == pytest.approx(scaled.weights.max(), abs=1e-4)
    assert float(metric(at, "en", "lesson_scaling.one_entropy")) > 0.5 * math.log(16)
    assert at.query_params["scaled"] == "true" and at.query_params["dk"] == "512"


def test_scaling_bad_url_is_clamped_and_said(lang):
    at = open_page("views/scaling.py", lang=lang, dk="100000", keys="two")
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 2 and "dk=100000" in warnings[0] and "512" in warnings[0]
    assert at.number_input(key="lscale.dk").value == 512 and at.number_input(key="lscale.keys").value == 8


# --- positions -------------------------------------------------------------------------------------


def test_positions_equivariance_holds_without_pe_and_breaks_with_it(lang):
    at = open_page("views/positions.py", lang=lang)
    assert_clean(at)
    tokens = "the dog chased a cat".split()
    order = positions.permutation("reverse", 5)
    plain = positions.equivariance(tokens, 8, 0, order, positions=False)
    with_pe = positions.equivariance(tokens, 8, 0, order, positions=True)
    assert float(metric(at, lang, "lesson_positions.diff_plain")) == pytest.approx(plain.max_diff, rel=1e-2)
    assert float(metric(at, lang, "lesson_positions.diff_plain")) < 1e-12
    assert float(metric(at, lang, "lesson_positions.diff_pe")) == pytest.approx(with_pe.max_diff, rel=1e-2)
    assert with_pe.max_diff > 0.1
    assert len(texts(at, "success")) == 1 and not texts(at, "warning")
    np.testing.assert_allclose(heatmap(at, 0), plain.out)
    np.testing.assert_allclose(heatmap(at, 2), plain.out_shuffled)
    assert len(at.get("plotly_chart")) == 5


def test_positions_shared_url_with_pe_and_exact_sinusoids():
    at = open_page(
        "views/positions.py",
        lang="en",
        text="I like green tea",
        d_model="16",
        seed="5",
        perm="shuffle",
        pe="true",
        n_pos="6",
        pe_d="10",
        open="values",  # the first values' table, folded until opened
    )
    assert_clean(at)
    tokens = ["I", "like", "green", "tea"]
    shown = positions.equivariance(tokens, 16, 5, positions.permutation("shuffle", 4, 5), positions=True)
    np.testing.assert_allclose(heatmap(at, 0), shown.out)
    np.testing.assert_allclose(heatmap(at, 1), shown.out_unshuffled)
    assert len(texts(at, "warning")) == 1  # the verdict: the outputs now depend on position
    pe = _decode(figures(at)[4]["data"][0]["z"])
    assert pe.shape == (6, 10)
    assert pe[1, 0] == pytest.approx(math.sin(1.0), abs=1e-12) and pe[1, 1] == pytest.approx(math.cos(1.0), abs=1e-12)
    assert pe[5, 4] == pytest.approx(math.sin(5 / 10000 ** (4 / 10)), abs=1e-12)
    table = at.dataframe[0].value
    assert table.iloc[1, 0] == pytest.approx(math.sin(1.0)) and table.iloc[3, 3] == pytest.approx(
        math.cos(3 / 10000**0.2)
    )


def test_positions_widgets_and_bad_input():
    at = open_page("views/positions.py", lang="zh", d_model="1", perm="sideways")
    assert_clean(at)
    assert len(texts(at, "warning")) == 2  # d_model clamped to 2, perm back to reverse
    at.selectbox(key="lpos.perm").set_value("swap")
    at.toggle(key="lpos.pe").set_value(True)
    at.text_input(key="lpos.text").set_value("单")
    at.run()
    assert_clean(at)
    assert catalog("zh")["lesson_positions.empty"] in texts(at, "info")
    assert at.query_params["perm"] == "swap" and at.query_params["pe"] == "true" and at.query_params["d_model"] == "2"
    assert len(at.get("plotly_chart")) == 1  # only the sinusoid chart without a sentence


# --- masking ---------------------------------------------------------------------------------------


def table_rows(at, index: int) -> list[list]:
    return at.dataframe[index].value.values.tolist()


def test_masking_causal_rows_and_float16_refuses_minus_1e9(lang):
    at = open_page("views/masking.py", lang=lang)
    assert_clean(at)
    assert not at.dataframe and at.query_params["open"] == ""  # both tables folded until opened (issue 61)
    at.session_state["lmask.open.rows"] = at.session_state["lmask.open.fills"] = True
    at.run()
    assert at.query_params["open"] == "rows,fills"
    cat = catalog(lang)
    tokens = ["<BOS>", "I", "like", "you", "<EOS>"]
    check = masking.parallel_vs_sequential(tokens)
    assert float(metric(at, lang, "lesson_masking.parallel_metric", n=5)) < 1e-12
    rows = table_rows(at, 0)
    assert [r[2] for r in rows] == ["<BOS>", "<BOS> I", "<BOS> I like", "<BOS> I like you", "<BOS> I like you <EOS>"]
    assert [r[3] for r in rows] == ["I", "like", "you", "<EOS>", "—"]
    weights = heatmap(at, 0)
    np.testing.assert_allclose(np.nan_to_num(weights), check.weights.numpy())
    assert np.isnan(weights[np.triu_indices(5, 1)]).all()  # blocked cells are drawn as blocked
    # defaults: float16 with -1e9 is refused by torch, computed live
    assert metric(at, lang, "lesson_masking.stored") == "-inf"
    assert texts(at, "error") == [catalog(lang)["lesson_masking.refused"].format(dtype="float16")]
    assert any("overflow" in c and "`" in c for c in texts(at, "caption"))  # torch's own words, apart and verbatim
    table = {(r[0], r[1]): r for r in table_rows(at, 1)}
    assert table["float16", "-1e9"][2] == "-inf" and table["float16", "-1e9"][4] == cat["lesson_masking.kind_refused"]
    assert table["bfloat16", "-1e9"][2] == "-998244352"  # not -1e9: bfloat16 keeps 8 mantissa bits
    assert table["float32", "-1e9"][2] == "-1000000000"
    assert table["float32", "-inf"][4] == "NaN" and table["float32", "-inf"][5] == cat["lesson_masking.kind_zeros"]
    assert table["float32", "-1e9"][4] == cat["lesson_masking.kind_uniform"].format(w="0.2", t=5)


def test_masking_widgets_pick_a_combination():
    at = open_page("views/masking.py", lang="en")
    at.segmented_control(key="lmask.dtype").set_value("bfloat16")
    at.segmented_control(key="lmask.fill").set_value("-inf")
    at.run()
    assert_clean(at)
    assert metric(at, "en", "lesson_masking.blank_naive") == "NaN"
    assert metric(at, "en", "lesson_masking.blank_sdpa") == "all 0"
    assert catalog("en")["lesson_masking.verdict_nan"] in texts(at, "warning")
    at.segmented_control(key="lmask.fill").set_value("-1e9").run()
    assert metric(at, "en", "lesson_masking.stored") == "-998244352"
    assert metric(at, "en", "lesson_masking.blank_naive").startswith("0.2002 each")
    at.selectbox(key="lmask.blank").set_value("none").run()
    assert catalog("en")["lesson_masking.verdict_none"] in texts(at, "info")
    assert dict(at.query_params) == {
        "text": "<BOS> I like you <EOS>",
        "blank": "none",
        "dtype": "bfloat16",
        "fill": "-1e9",
        "open": "",
        "lang": "en",
        "palette": "default",
    }


def test_masking_shared_url_and_bad_values():
    at = open_page(
        "views/masking.py", lang="zh", text="a b c", blank="first", dtype="float64", fill="-inf", open="rows"
    )
    assert_clean(at)
    assert len(texts(at, "warning")) >= 1 and "dtype=float64" in texts(at, "warning")[0]
    assert metric(at, "zh", "lesson_masking.blank_naive") == "NaN"  # float16 (the fallback) with -inf
    assert table_rows(at, 0)[2][2] == "a b c"
    at.text_input(key="lmask.text").set_value("   ").run()
    assert_clean(at)
    assert catalog("zh")["lesson_masking.empty"] in texts(at, "info")
