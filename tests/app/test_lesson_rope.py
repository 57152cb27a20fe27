"""The RoPE lesson through AppTest: its numbers are the lesson module's, bad links and bad typing are said and kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.lessons import rope
from attnlab.ui.app.i18n import catalog
from tests.app.charts import _decode, figures, heatmap_values
from tests.app.conftest import assert_clean, metric, open_page, texts

PAGE = "views/rope.py"


def test_rope_defaults_show_the_lessons_numbers(lang):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    cat = catalog(lang)
    assert len(at.get("plotly_chart")) == 4  # the plane, the frequencies, the scores, the decay
    turn = rope.pair_turn(64, 10000.0, 0, 5, 0, interleaved=False)
    plane = figures(at)[0]["data"]
    trail = next(tr for tr in plane if tr.get("mode") == "markers")
    np.testing.assert_allclose(np.c_[_decode(trail["x"]), _decode(trail["y"])], turn.trail)
    assert metric(at, lang, "lesson_rope.angle_metric", i=0) == cat["lesson_rope.angle_value"].format(rad="5")
    check = rope.shift_check(64, 10000.0, 0, 100, interleaved=False)
    before, after, other = heatmap_values(at, 2)
    np.testing.assert_allclose(before, check.before)
    np.testing.assert_allclose(after, check.after)
    np.testing.assert_allclose(other, check.other)
    assert float(metric(at, lang, "lesson_rope.shift_metric")) < 1e-12
    assert float(metric(at, lang, "lesson_rope.layouts_metric")) == pytest.approx(check.layouts_diff, rel=1e-2)
    assert float(metric(at, lang, "lesson_rope.permuted_metric")) < 1e-12
    assert texts(at, "warning") == [
        cat["lesson_rope.layouts_warning"].format(diff=f"{check.layouts_diff:.3g}", perm=f"{check.permuted_diff:.3g}")
    ]  # the pairings' warning, and no replaced value
    assert metric(at, lang, "lesson_rope.bound_zero") == "16.5"  # (64/2 + 1)/2
    decay = figures(at)[3]["data"]
    assert _decode(decay[0]["y"])[0] == 1.0 and len(_decode(decay[0]["x"])) == 513
    worked = next(c for c in texts(at, "caption") if "0.749894" in c)  # 10000^(-2/64) = 10^(-1/8)
    assert "6.283" not in worked and "8.37876" in worked  # pair 1 turns once every 2*pi*10^(1/8) positions


def test_rope_bad_link_is_replaced_and_said_then_the_widgets_take_over():
    at = open_page(PAGE, lang="zh", d="7", base="0.5", pair="99", layout="sideways", shift="-4", dist="many")
    assert_clean(at)
    cat = catalog("zh")
    said = texts(at, "warning")[:-1]  # the last warning is the pairings' own
    assert len(said) == 6
    for asked in ("`d=7`", "`base=0.5`", "`layout=sideways`", "`pair=99`", "`shift=-4`", "`dist=many`"):
        assert any(asked in w for w in said), asked
    assert any("`8`" in w and "偶数" in w for w in said) and any("`10000`" in w for w in said)
    assert at.query_params["d"] == "8" and at.query_params["pair"] == "3" and at.query_params["base"] == "10000"
    assert at.query_params["layout"] == "half" and at.query_params["shift"] == "0" and at.query_params["dist"] == "512"
    at.number_input(key="lrope.d").set_value(9)
    at.number_input(key="lrope.base").set_value(1.0)
    at.run()
    assert_clean(at)
    infos = texts(at, "info")
    assert cat["lesson_rope.odd_d"].format(asked="`9`", used="`10`") in infos
    assert cat["lesson_rope.low_base"].format(asked="`1`", used="`10000`") in infos
    assert at.number_input(key="lrope.d").value == 9 and at.number_input(key="lrope.base").value == 1.0  # kept
    assert metric(at, "zh", "lesson_rope.bound_zero") == "3"  # d = 10 used: (5 + 1)/2


def test_rope_interleaved_link_and_a_long_shift_keep_every_score():
    at = open_page(PAGE, lang="en", d="16", base="500000", layout="interleaved", pair="7", pos="3000", seed="4")
    assert_clean(at)
    turn = rope.pair_turn(16, 500000.0, 7, 3000, 4, interleaved=True)
    assert turn.dims == (14, 15)
    assert metric(at, "en", "lesson_rope.theta_metric", i=7) == f"{500000.0 ** (-14 / 16):.6g}"
    at.slider(key="lrope.shift").set_value(131_072).run()
    assert_clean(at)
    check = rope.shift_check(16, 500000.0, 4, 131_072, interleaved=True)
    before, after, _ = heatmap_values(at, 2)
    np.testing.assert_allclose(after, before, atol=1e-9)  # 128k positions on: the same scores
    np.testing.assert_allclose(after, check.after)
    assert float(metric(at, "en", "lesson_rope.shift_metric")) < 1e-9
    assert at.query_params["shift"] == "131072" and at.query_params["layout"] == "interleaved"
    assert math.isclose(float(at.query_params["base"]), 500000.0)
