"""The decoder page's window cache (contract 14): what the cache holds and the accuracy it costs, from the library."""

from __future__ import annotations

import numpy as np

from attnlab import trained
from attnlab.ui.app.i18n import catalog
from tests.app.charts import blocked_cells, heatmap_values
from tests.app.conftest import assert_clean, metric, open_page, texts

PAGE = "views/decoder.py"
SEQ = "k 3 x m q 7 k 3 x m q 7 k 3 x"  # period 6
TRUTH = ("m q 7 k 3 x " * 3).split()[:16]  # the period continued


def test_a_window_greys_what_it_evicted_and_says_the_accuracy_it_costs(lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="generate", gen="5", window="4", sinks="1")
    assert_clean(at)
    cat, model = catalog(lang), trained.load("induction-2l")
    runs = {
        ws: trained.generate(model, SEQ.split(), 16, window=ws[0], sinks=ws[1]) for ws in ((None, 0), (4, 1), (4, 0))
    }
    right = {ws: sum(s.symbol == w for s, w in zip(steps, TRUTH, strict=True)) for ws, steps in runs.items()}
    s, t = runs[(4, 1)][4], len(SEQ.split()) + 1 + 4
    assert list(s.positions) == [0, t - 4, t - 3, t - 2, t - 1]  # the start marker and the last four
    keys = heatmap_values(at, 3)[0]  # 2 layer grids, the query row, then K: every token so far
    assert keys.shape[0] == t
    np.testing.assert_allclose(keys[s.positions], s.keys[1, 0], atol=1e-6)
    assert blocked_cells(at, 3)[0].all(axis=1).sum() == t - 5  # the evicted rows are greyed
    np.testing.assert_allclose(heatmap_values(at, 5)[0][0][s.positions], s.weights[1, 0], atol=1e-6)
    assert metric(at, lang, "decoder_window.m_full") == f"{right[(None, 0)]}/16"
    assert metric(at, lang, "decoder_window.m_yours", w=4, s=1) == f"{right[(4, 1)]}/16"
    assert metric(at, lang, "decoder_window.m_other", w=4, s=0) == f"{right[(4, 0)]}/16"
    full, yours, other = right[(None, 0)], right[(4, 1)], right[(4, 0)]
    assert full == 16 and yours < full  # the induction head has nothing to copy from
    drop = cat["decoder_window.short_drop"].format(w=4, p=6, full=full, yours=yours, n=16, pts=full - yours)
    verdict = "help" if yours > other else "hurt" if yours < other else "nothing"
    said = cat[f"decoder_window.verdict_{verdict}"].format(s=1, w=4, a=yours, b=other, n=16)
    markdown = [str(m.value) for m in at.markdown]
    assert drop in markdown and said in markdown


def test_a_window_of_zero_and_negative_sinks_in_a_link_are_replaced_and_said():
    at = open_page(PAGE, lang="zh", seq=SEQ, inside="generate", window="0", sinks="-2")
    assert_clean(at)
    warnings = texts(at, "warning")
    assert any("`window=0`" in w and "`none`" in w for w in warnings)
    assert any("`sinks=-2`" in w and "`0`" in w for w in warnings)
    assert at.query_params["window"] == "none" and at.query_params["sinks"] == "0"
    assert heatmap_values(at, 3)[0].shape[0] == len(SEQ.split()) + 1  # the whole cache
    full = catalog("zh")["decoder_window.full_only"].format(right=16, n=16)
    assert full in texts(at, "caption")
