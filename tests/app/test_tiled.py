"""The Tiled attention page through AppTest: both languages, step navigation, the numbers it shows checked
against an independent full softmax, URL state, bad URL values and skipped causal tiles."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from attnlab.ui.app.i18n import catalog
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, open_page, texts

PAGE = "views/tiled.py"


def visit(**query: str) -> AppTest:
    """A visitor of this page's URL with `query`."""
    return open_page(PAGE, **query)


def example(T: int, d: int, seed: int, causal: bool):
    """The page's Q, K, V and the plain softmax attention, computed here without attnlab."""
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(T, d, generator=gen, dtype=torch.float64) for _ in range(3))
    s = q @ k.T / math.sqrt(d)
    if causal:
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return s, torch.softmax(s, dim=-1) @ v


def heat(at: AppTest, index: int, panel: int = 0) -> np.ndarray:
    """The values of one heatmap panel of one chart."""
    traces = [tr for tr in figures(at)[index]["data"] if tr.get("type") == "heatmap" and tr.get("texttemplate") != "−∞"]
    return _decode(traces[panel]["z"])


def test_default_walkthrough_in_both_languages(lang):
    at = visit(lang=lang)
    assert_clean(at)
    cat = catalog(lang)
    assert at.title[0].value == cat["tiled.title"]
    assert len(at.get("plotly_chart")) == 4  # tile, full softmax, partial output, output so far
    head = cat["tiled.step_head"].format(s=1, n=6, i=1, n_q=2, j=1, n_k=3)
    assert any(head in m.value for m in at.markdown)
    scores, _ = example(6, 4, 0, False)
    assert heat(at, 0) == pytest.approx(scores[0:3, 0:2].numpy())  # the first tile: q0-q2 x k0-k1
    table = at.dataframe[0].value
    assert list(table.iloc[:, 1]) == ["−∞"] * 3  # m before the first tile
    assert [float(x) for x in table.iloc[:, 2]] == pytest.approx(scores[0:3, 0:2].max(1).values.tolist(), abs=1e-4)
    assert dict(at.query_params) == dict(
        T="6", d="4", bq="3", bk="2", causal="false", seed="0", step="1", lang=lang, palette="default"
    )
    assert cat["tiled.not_yet"].format(rows=0, t=6) in [c.value for c in at.caption]


def test_next_previous_and_slider_walk_the_tiles():
    at = visit()
    at.button[[b.label for b in at.button].index("Next")].click().run()
    assert at.query_params["step"] == "2" and at.slider(key="tiled.step").value == 2
    scores, _ = example(6, 4, 0, False)
    table = at.dataframe[0].value
    m_after = scores[0:3, 0:4].max(1).values  # after two key blocks the running max covers k0..k3
    assert [float(x) for x in table.iloc[:, 2]] == pytest.approx(m_after.tolist(), abs=1e-4)
    l_after = torch.exp(scores[0:3, 0:4] - m_after[:, None]).sum(1)
    assert [float(x) for x in table.iloc[:, 5]] == pytest.approx(l_after.tolist(), abs=1e-4)
    alpha = torch.exp(scores[0:3, 0:2].max(1).values - m_after)  # how much the first tile's sums shrink
    assert [float(x) for x in table.iloc[:, 3]] == pytest.approx(alpha.tolist(), abs=1e-4)
    at.slider(key="tiled.step").set_value(6).run()
    at.button[[b.label for b in at.button].index("Previous")].click().run()
    assert at.query_params["step"] == "5"


def test_url_state_gives_the_same_numbers_and_the_outputs_agree_at_the_end(lang):
    query = dict(T="5", d="3", bq="2", bk="2", causal="true", seed="7", step="9", lang=lang)
    at = visit(**query)
    assert_clean(at)
    assert {k: at.query_params[k] for k in query} == query
    _, out = example(5, 3, 7, True)
    assert heat(at, 3, 0) == pytest.approx(out.numpy(), abs=1e-12)  # tiled output, every row done
    assert heat(at, 3, 1) == pytest.approx(out.numpy(), abs=1e-12)  # full softmax output
    success = texts(at, "success")
    assert len(success) == 1
    diff = float(re.search(r"= ([0-9.e+-]+)", success[0]).group(1))
    assert diff < 1e-12


def test_a_tile_hidden_by_the_causal_mask_is_skipped(lang):
    at = visit(T="4", bq="2", bk="2", causal="true", step="2", lang=lang)
    assert_clean(at)
    assert catalog(lang)["tiled.skipped"] in texts(at, "info")
    assert len(at.get("plotly_chart")) == 3  # no tile chart: nothing was computed
    table = at.dataframe[0].value
    assert list(table.iloc[:, 1]) == list(table.iloc[:, 2])  # m unchanged


def test_bad_url_values_are_named_and_replaced(lang):
    at = visit(T="0", d="abc", bq="2.5", causal="maybe", seed="1e999", step="500", lang=lang)
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 6
    for needle in ("T=0", "d=abc", "bq=2.5", "causal=maybe", "seed=1e999", "500"):
        assert any(needle in w for w in warnings), needle
    # T clamps to 1, d and bq fall back to their defaults: one query block x one key block = 1 step
    assert dict(at.query_params) == dict(
        T="1", d="4", bq="3", bk="2", causal="false", seed="0", step="1", lang=lang, palette="default"
    )
    assert len(texts(at, "success")) == 1  # a single step is also the last: the outputs are compared
