"""The offline pack: every stage by name in .npz and CSV (checked against plain torch), and the HTML file's makeup."""

from __future__ import annotations

import csv
import html
import io
import math
import re
import zipfile

import numpy as np
import plotly.offline
import pytest
import torch

from attnlab.classroom.pack import csv_zip_bytes, npz_bytes, stage_matrices
from attnlab.export_html import pack_html
from attnlab.pipeline import LabConfig, run_lab
from attnlab.ui.app.i18n import catalog

HOSTILE = "<img src=x onerror=alert(1)>"
CONFIG = LabConfig(text=f"<BOS> 我 like you {HOSTILE} <EOS>", d_model=8, heads=2, causal=True, seed=5)
EXPECTED_NAMES = (
    ["x", "q", "k", "v"]
    + [f"{stage}_h{h}" for stage in ("scores", "scaled", "masked", "weights", "z") for h in (1, 2)]
    + ["concat", "output", "w_q", "w_k", "w_v", "w_o"]
)


def translator(lang: str):
    """What the page passes as `tr`: its `t` for one language."""
    strings = catalog(lang)
    return lambda key, **fields: strings[key].format(**fields) if fields else strings[key]


@pytest.fixture(scope="module")
def result():
    return run_lab(CONFIG)


def reference(result) -> dict[str, torch.Tensor]:
    """Per-head weights and the output after W_O, by plain torch from X and the projections."""
    w, x, d_k = result.weights, result.x, CONFIG.d_model // CONFIG.heads
    t = x.size(0)
    mask = torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1)
    out, heads = {}, []
    for h in range(CONFIG.heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        q, k, v = (x @ w.w_q)[:, cols], (x @ w.w_k)[:, cols], (x @ w.w_v)[:, cols]
        masked = q @ k.T / math.sqrt(d_k) + mask
        out[f"masked_h{h + 1}"] = masked
        out[f"weights_h{h + 1}"] = torch.softmax(masked, dim=-1)
        heads.append(out[f"weights_h{h + 1}"] @ v)
    out["output"] = torch.cat(heads, dim=1) @ w.w_o
    return out


def test_every_stage_has_its_documented_name(result):
    matrices = stage_matrices(result)
    assert list(matrices) == EXPECTED_NAMES
    t = len(result.tokens)
    assert matrices["x"].values.shape == (t, 8) and matrices["scores_h2"].values.shape == (t, t)
    assert matrices["z_h1"].values.shape == (t, 4) and matrices["w_o"].values.shape == (8, 8)
    assert matrices["weights_h1"].rows == result.tokens == matrices["weights_h1"].cols


def test_npz_loads_without_pickle_and_holds_the_right_numbers(result):
    with np.load(io.BytesIO(npz_bytes(result)), allow_pickle=False) as npz:
        assert sorted(npz.files) == sorted([*EXPECTED_NAMES, "tokens"])
        assert npz["tokens"].tolist() == result.tokens
        for name, expected in reference(result).items():
            np.testing.assert_allclose(npz[name], expected.numpy(), atol=1e-12)  # the same float64 numbers, written
        assert np.isneginf(npz["masked_h1"]).sum() == len(result.tokens) * (len(result.tokens) - 1) // 2


def test_csv_zip_has_one_file_per_matrix_with_bom_and_token_labels(result):
    with zipfile.ZipFile(io.BytesIO(csv_zip_bytes(result))) as archive:
        assert archive.namelist() == [f"{name}.csv" for name in EXPECTED_NAMES]
        raw = archive.read("masked_h2.csv")
        q_rows = list(csv.reader(io.StringIO(archive.read("q.csv").decode("utf-8-sig"))))
    assert raw.startswith(b"\xef\xbb\xbf")  # Excel reads UTF-8 (and so Chinese tokens) only with a BOM
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows[0] == ["", *result.tokens] and [r[0] for r in rows[1:]] == result.tokens
    values = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    np.testing.assert_array_equal(values, reference(result)["masked_h2"].numpy())  # repr round-trips exactly
    assert q_rows[0] == ["", *(f"d{i}" for i in range(8))] and "我" in [r[0] for r in q_rows]


@pytest.fixture(scope="module")
def page(result) -> str:
    return pack_html(
        CONFIG, result, app_url="https://attnlab.example/?text=a&causal=true", tr=translator("en"), lang="en"
    )


def test_html_embeds_plotly_once_and_links_nothing(page):
    js = plotly.offline.get_plotlyjs()
    assert page.count(js[:300]) == 1
    outside_js = page.replace(js, "")
    assert not re.search(r"<script[^>]*\bsrc\s*=", outside_js, re.I)
    assert not re.search(r"<link\b|@import|url\(|<iframe|<img\b", outside_js, re.I)
    assert "Content-Security-Policy" in outside_js and "default-src 'none'" in outside_js
    assert "mathjax" not in outside_js.lower() and "katex" not in outside_js.lower()


def test_html_has_every_stage_with_formula_and_shape(page, result):
    t = len(result.tokens)
    assert page.count('class="plotly-graph-div"') == 11
    for number in range(1, 12):
        assert f'<section id="step-{number}">' in page
        assert html.escape(catalog("en")[f"present.step.{number}.title"], quote=False) in page
    assert f"(H, T, T) = (2, {t}, {t})" in page and "M<sub>ij</sub> = 0 (j ≤ i)" in page
    assert "S<sub>h</sub> × 0.5000" in page


def test_html_escapes_user_text(page):
    assert HOSTILE not in page
    assert html.escape(HOSTILE, quote=False) in page
    assert 'href="https://attnlab.example/?text=a&amp;causal=true"' in page


def test_html_speaks_chinese_and_is_deterministic(result):
    zh = pack_html(CONFIG, result, app_url="http://localhost:8501/", tr=translator("zh"), lang="zh")
    assert '<html lang="zh">' in zh and catalog("zh")["present.step.8.title"] in zh
    assert zh == pack_html(CONFIG, result, app_url="http://localhost:8501/", tr=translator("zh"), lang="zh")


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,hi", "//evil.example"])
def test_html_refuses_a_link_that_is_not_http(result, url):
    with pytest.raises(ValueError):
        pack_html(CONFIG, result, app_url=url, tr=translator("en"), lang="en")


def test_html_refuses_an_empty_sentence():
    empty = LabConfig(text=" ")
    with pytest.raises(ValueError):
        pack_html(empty, run_lab(empty), app_url="http://localhost:8501/", tr=translator("en"), lang="en")
