"""The KV-cache page through AppTest: its numbers are attnlab.kvcache's and attnlab.mla's, bad links and typing said."""

from __future__ import annotations

import numpy as np
import torch

from attnlab import kvcache
from attnlab.figures.kvcache import human_bytes
from attnlab.mla import MLAWeights, mla_steps
from attnlab.ui.app.i18n import catalog
from tests.app.charts import _decode, figures, heatmap_values
from tests.app.conftest import assert_clean, metric, open_page, texts

PAGE = "views/kv_cache.py"


def test_defaults_show_llama_3_8bs_cache_the_chart_and_the_mla_from_the_library(lang):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    cat, llama = catalog(lang), kvcache.MODELS["llama-3-8b"]
    assert metric(at, lang, "kvcache.per_token") == human_bytes(131_072) == "131 kB"
    assert metric(at, lang, "kvcache.total") == human_bytes(kvcache.cache_bytes(llama, 8192))
    assert metric(at, lang, "kvcache.weights") == human_bytes(kvcache.PARAMETERS["llama-3-8b"] * 2)
    latex = " ".join(e.value for e in at.latex)
    assert r"2 \cdot 32 \cdot 8 \cdot 128 \cdot 2 = 131{,}072" in latex
    fit = kvcache.tokens_that_fit(llama, kvcache.PARAMETERS["llama-3-8b"])
    assert any(f"{fit:,}" in i for i in texts(at, "info"))
    curves = figures(at)[0]["data"]
    kinds = kvcache.same_width(llama)
    tokens = kvcache.curve_tokens(8192, 4096)
    expected = kvcache.curves(kinds, tokens)
    assert [tr["name"] for tr in curves] == [cat[f"kvcache.kind_{k}"].format(kv=kinds[k].kv_heads) for k in kinds]
    for trace, key in zip(curves, kinds, strict=True):
        np.testing.assert_allclose(_decode(trace["x"]), tokens)
        np.testing.assert_allclose(_decode(trace["y"]), [max(y, 1.0) for y in expected[key]])
    assert len(at.get("plotly_chart")) == 1 and at.main.expander[-1].label == cat["kvcache.mla_title"]
    at.session_state["kv.open.mla"] = True  # MLA's steps, folded until opened (issue 61)
    at.run()
    assert_clean(at)
    assert at.query_params["open"] == "mla"
    weights = MLAWeights.random(32, 4, 16, 8, 4, 8, seed=0)
    x = torch.randn(6, 32, generator=torch.Generator().manual_seed(0))
    plain, folded = mla_steps(x, weights, 4), mla_steps(x, weights, 4, absorbed=True)
    (latent,) = heatmap_values(at, 2)
    np.testing.assert_allclose(latent, plain.latent.double().numpy())
    (absorbed,) = heatmap_values(at, 9)
    np.testing.assert_allclose(absorbed, folded.weights[0].double().numpy())
    assert float(metric(at, lang, "kvcache.diff_weights")) <= 1e-5
    bars = figures(at)[10]["data"][0]
    assert list(_decode(bars["y"])) == [64, 32, 16, 20]  # 2 x K/V heads x 8 for 4, 2 and 1 heads; MLA 16 + 4
    assert len(at.get("plotly_chart")) == 11


def test_a_bad_custom_link_is_replaced_and_said_in_chinese_and_the_page_uses_what_it_says():
    at = open_page(
        PAGE, lang="zh", model="custom", layers="0", heads="12", kv_heads="8", context="20000000", window="0"
    )
    assert_clean(at)
    said = texts(at, "warning")
    for asked in ("`layers=0`", "`context=20000000`", "`window=0`", "`kv_heads=8`"):
        assert any(asked in w for w in said), (asked, said)
    assert any("`6`" in w and "heads" in w for w in said)  # the largest divisor of 12 below 8
    q = at.query_params
    assert (q["layers"], q["kv_heads"], q["context"], q["window"]) == ("1", "6", "10000000", "none")
    shape = kvcache.ModelShape("custom", 1, 12, 6, 128)
    assert metric(at, "zh", "kvcache.per_token") == human_bytes(kvcache.bytes_per_token(shape))
    assert metric(at, "zh", "kvcache.total") == human_bytes(kvcache.cache_bytes(shape, 10**7))


def test_typed_heads_that_do_not_divide_and_a_rope_without_latent_are_said_and_kept(lang):
    at = open_page(PAGE, lang=lang, model="custom")
    at.number_input(key="kv.kv_heads").set_value(5)
    at.number_input(key="kv.rope_dim").set_value(64)
    at.run()
    assert_clean(at)
    cat = catalog(lang)
    infos = texts(at, "info")
    assert cat["kvcache.kv_not_dividing"].format(asked="`5`", heads=32, used="`4`") in infos
    assert cat["kvcache.rope_without_latent"].format(asked="`64`") in infos
    assert at.number_input(key="kv.kv_heads").value == 5 and at.number_input(key="kv.rope_dim").value == 64
    assert metric(at, lang, "kvcache.per_token") == human_bytes(2 * 32 * 4 * 128 * 2)


def test_deepseek_v3_caches_its_latent_never_the_listed_heads_and_does_not_fit_one_gpu(lang):
    at = open_page(PAGE, lang=lang, model="deepseek-v3", bytes="fp8", context="131072", batch="2")
    assert_clean(at)
    cat, ds = catalog(lang), kvcache.MODELS["deepseek-v3"]
    assert metric(at, lang, "kvcache.per_token") == human_bytes(61 * 576) == "35.1 kB"
    naive = human_bytes(kvcache.naive_bytes_per_token(ds, 1))
    assert cat["kvcache.mla_naive"].format(kv=128, naive=naive, times="57") in texts(at, "warning")
    latex = " ".join(e.value for e in at.latex)
    assert r"61 \cdot (512 + 64) \cdot 1 = 35{,}136" in latex
    weights = human_bytes(kvcache.PARAMETERS["deepseek-v3"])
    assert any(weights in e for e in texts(at, "error"))  # 671 GB of weights: no room for a cache on one H100
    at.selectbox(key="kv.model").set_value("mistral-7b").run()
    assert_clean(at)
    assert any("4,096" in s for s in texts(at, "success"))  # the window's cache fits: any length does
    assert any("4,096" in c and "131,072" in c for c in texts(at, "caption"))
