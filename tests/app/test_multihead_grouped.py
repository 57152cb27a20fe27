"""The Multi-head page's MHA / GQA / MQA section through AppTest: its numbers are compare()'s, bad links are said."""

from __future__ import annotations

import re

import numpy as np

from attnlab.anatomy.grouped import compare
from attnlab.pipeline import LabConfig, run_lab
from attnlab.ui.app.i18n import catalog
from tests.app.charts import _decode, figures, heatmap_values
from tests.app.conftest import assert_clean, metric, open_page, texts

PAGE = "views/multihead.py"
KEYS = ("mh.gqa_share", "mh.gqa_out", "mh.gqa_diff")


def section_charts(at) -> dict[str, dict]:
    """The section's charts by key (the page's other charts left out)."""
    keyed = {c.proto.id: i for i, c in enumerate(at.get("plotly_chart"))}
    found = {key: next(i for cid, i in keyed.items() if key in cid) for key in KEYS if any(key in c for c in keyed)}
    specs = figures(at)
    return {key: specs[i] for key, i in found.items()}


def table_columns(at) -> dict[str, list[str]]:
    """The section's table (the markdown one with a row on the cache in bfloat16), variant by variant: its header's
    name and the cells of its column, top to bottom, unescaped."""
    table = next(m.value for m in at.markdown if m.value.startswith("| ") and "bfloat16" in m.value)
    cells = [re.split(r"(?<!\\)\|", line.strip()[1:-1]) for line in table.splitlines()]  # at pipes not escaped
    lines = [[c.strip().replace("\\", "") for c in line] for line in cells]
    header, rows = lines[0], lines[2:]
    return {name: [row[i] for row in rows] for i, name in enumerate(header) if i}


def test_gqa_section_defaults_are_compares_numbers(lang):
    at = open_page(PAGE, lang=lang, open="gqa")  # the section, folded until opened
    assert_clean(at)
    result = run_lab(LabConfig())
    found = compare(result.x, result.weights, 4, 2)
    columns = table_columns(at)
    assert list(columns) == ["MHA", "GQA", "MQA"]
    assert [columns[name][:5] for name in columns] == [
        ["4", "1", "(8, 8)", "(6, 8)", "16"],  # MHA: 4 K/V heads of d_k = 2, 2 * 4 * 2 numbers per token
        ["2", "2", "(8, 4)", "(6, 4)", "8"],
        ["1", "4", "(8, 2)", "(6, 2)", "4"],
    ]
    assert [columns[name][5:7] for name in columns] == [["32 B", "192 B"], ["16 B", "96 B"], ["8 B", "48 B"]]
    assert [columns[name][7] for name in columns] == [f"{v.max_diff:.3g}" for v in found.variants]
    charts = section_charts(at)
    assert set(charts) == set(KEYS)
    share = _decode(charts["mh.gqa_share"]["data"][0]["z"])
    np.testing.assert_allclose(share, [[0, 1 / 3, 2 / 3, 1], [0, 0, 1, 1], [0, 0, 0, 0]])  # q1,q2 -> kv1 in GQA
    outputs = [_decode(tr["z"]) for tr in charts["mh.gqa_out"]["data"] if tr.get("type") == "heatmap"]
    for shown, v in zip(outputs, found.variants, strict=True):
        np.testing.assert_allclose(shown, v.steps.output.numpy(), atol=1e-12)
    gqa = found.variants[1]
    assert metric(at, lang, "gqa.diff_metric", name="GQA") == f"{gqa.max_diff:.3g}"
    assert metric(at, lang, "gqa.rel_metric", name="MQA") == f"{found.variants[2].rel_diff:.3g}"
    assert at.query_params["gqa_h"] == "4" and at.query_params["gqa_kv"] == "2"


def test_gqa_bad_link_is_replaced_and_said_and_a_prime_head_count_says_why_gqa_is_gone():
    at = open_page(PAGE, lang="zh", gqa_h="3", gqa_kv="5", open="gqa")
    assert_clean(at)
    said = " ".join(texts(at, "warning"))
    assert "`gqa_h=3`" in said and "`gqa_kv=5`" in said  # 3 does not divide d_model 8; 5 does not divide 2
    assert at.query_params["gqa_h"] == "2" and at.query_params["gqa_kv"] == "2"
    assert catalog("zh")["gqa.same_only"].format(h=2) in texts(at, "info")
    assert list(table_columns(at)) == ["MHA", "MQA"]  # H = 2: GQA would be one of the two
    at.selectbox(key="mh.gqa_h").set_value(8).run()
    assert_clean(at)
    at.selectbox(key="mh.gqa_kv").set_value(4).run()
    assert_clean(at)
    assert [column[0] for column in table_columns(at).values()] == ["8", "4", "1"]
    result = run_lab(LabConfig())
    found = compare(result.x, result.weights, 8, 4)
    diffs = heatmap_values(at, len(at.get("plotly_chart")) - 1)
    for shown, v in zip(diffs, found.variants[1:], strict=True):
        np.testing.assert_allclose(shown, v.diff.abs().numpy(), atol=1e-12)
    assert at.query_params["gqa_h"] == "8" and at.query_params["gqa_kv"] == "4"
