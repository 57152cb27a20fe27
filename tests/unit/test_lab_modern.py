"""The Playground's modern settings (contract 13) without Streamlit: the run, its fall-backs, the link, what-if, the
pack, the HTML export and the notebook.

The numbers of a run are held against the library's own pieces called directly and against PyTorch (SDPA with
enable_gqa and FlexAttention in the check); `tests/unit/test_modern_attention.py` holds those pieces against the
references themselves.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import replace

import numpy as np
import pytest
import torch

from attnlab import links, masks
from attnlab.classroom.build import questions_for_stage, state_digest
from attnlab.classroom.pack import csv_zip_bytes, npz_bytes, stage_matrices
from attnlab.classroom.whatif import Change, changed_config, compare
from attnlab.export_html import pack_html
from attnlab.labcheck import check_against_torch
from attnlab.multihead import MultiHeadWeights, multi_head_steps
from attnlab.notebook import from_query
from attnlab.pipeline import LabConfig, classic, run_lab
from attnlab.stages import NAMES, by_name
from attnlab.tokens import input_matrix, tokenize
from attnlab.ui.app.i18n import translator
from tests.app.charts import _decode
from tests.conftest import REFERENCE_GROUP

PACKED = "<BOS> I like you <EOS> <BOS> you like me <EOS>"
MODERN = LabConfig(PACKED, 8, 4, kv_heads=2, rope="half", alibi=True, mask="documents")


def test_a_classic_config_runs_exactly_as_before():
    """No modern setting: the same weights and the same call as before contract 13, bit for bit."""
    for config in (LabConfig(), LabConfig("I like you", 12, 3, True, 5, "identity", True)):
        result = run_lab(config)
        weights = MultiHeadWeights.random(config.d_model, seed=config.seed, init=config.init)
        x = input_matrix(tokenize(config.text), config.d_model, config.seed, config.positions)
        steps = multi_head_steps(x, x, weights, config.heads, is_causal=config.causal)
        assert torch.equal(result.steps.output, steps.output) and torch.equal(
            result.steps.heads.masked, steps.heads.masked
        )
        assert not config.modern and result.fallbacks == () and result.rule.kind == config.mask_kind


@REFERENCE_GROUP  # FlexAttention's first eager trace (seconds): paid once, by the references' worker
def test_a_modern_run_is_the_librarys_pieces_and_passes_the_check_with_flex_attention():
    result = run_lab(MODERN)
    tokens = tokenize(PACKED)
    ids = masks.documents_from_tokens(tokens)
    assert ids == [0] * 5 + [1] * 5 and result.rule.documents == tuple(ids)  # two documents, each ending at <EOS>
    assert result.rule.allowed == 2 * 15  # causal inside each of two 5-token documents
    x = input_matrix(tokens, 8, 0, False)
    weights = MultiHeadWeights.random(8, n_heads=4, n_kv_heads=2)
    steps = multi_head_steps(
        x, x, weights, 4, n_kv_heads=2, rope="half", alibi=True, attn_mask=masks.build("documents", 10, documents=ids)
    )
    assert torch.equal(result.steps.heads.weights, steps.heads.weights) and result.steps.k.shape == (10, 4)
    check = check_against_torch(result, flex=True)
    assert check.passed and check.after == "sdpa" and check.flex_error is None
    assert len(check.flex_per_head) == 4 and max(check.flex_per_head) <= check.tolerance


def test_window_sinks_and_prefix_runs_pass_the_check_against_nn_multihead_attention():
    for mask, extra in (("window", {"window": 2}), ("sinks", {"window": 2, "sinks": 1}), ("prefix", {"prefix": 2})):
        result = run_lab(LabConfig(mask=mask, alibi=True, **extra))
        check = check_against_torch(result)  # FlexAttention for these rules: tests/unit/test_modern_attention.py
        assert check.passed and check.after == "mha" and check.flex_per_head is None, (
            mask
        )  # square weights, no RoPE: MHA holds the float mask
        assert torch.equal(result.rule.mask, masks.build(mask, 6, **extra))


@pytest.mark.parametrize(
    "config, name, used, reason",
    [
        (LabConfig(d_model=6, heads=2, rope="half"), "rope", "none", "rope_odd"),
        (LabConfig(mask="prefix", prefix=30), "prefix", "6", "prefix_long"),
        (LabConfig(mask="documents"), "mask", "causal", "documents_one"),
        (LabConfig(heads=4, kv_heads=3), "kv_heads", "2", "kv_heads"),
    ],
)
def test_what_a_text_cannot_honour_is_replaced_and_said(config, name, used, reason):
    result = run_lab(config)
    (fallback,) = result.fallbacks
    assert (fallback.name, fallback.used, fallback.reason) == (name, used, reason)
    fixed = result.config
    assert run_lab(fixed).fallbacks == () and torch.equal(run_lab(fixed).steps.output, result.steps.output)


def test_a_prefix_longer_than_the_text_and_documents_without_eos_mean_what_they_fall_back_to():
    assert torch.equal(run_lab(LabConfig(mask="prefix", prefix=30)).rule.mask, masks.build("full", 6))
    assert torch.equal(run_lab(LabConfig(mask="documents")).rule.mask, masks.build("causal", 6))


def lab_values(query: dict[str, str]) -> tuple[dict, list[links.Replaced]]:
    values, replaced = links.read(("lab",), query)
    v = values["lab"]
    return v, replaced + links.settle_lab(v, query)


def test_the_link_keeps_contract_4s_causal_and_reads_the_new_parameters():
    v, replaced = lab_values({"causal": "1"})
    assert (v["mask"], v["causal"], v["kv_heads"], replaced) == ("causal", True, 2, [])
    v, replaced = lab_values({"mask": "window", "window": "2", "heads": "4", "kv_heads": "1", "rope": "interleaved"})
    assert (v["mask"], v["causal"], v["window"], v["kv_heads"], v["rope"], replaced) == (
        "window",
        True,
        2,
        1,
        "interleaved",
        [],
    )
    v, replaced = lab_values({"mask": "prefix"})
    assert (v["causal"], v["prefix"]) == (False, 3)  # a prefix lets early queries see later keys


@pytest.mark.parametrize(
    "query, name, used, reason",
    [
        ({"mask": "window", "causal": "false"}, "causal", "true", "causal_vs_mask"),
        ({"heads": "4", "kv_heads": "3"}, "kv_heads", "2", "kv_heads_not_dividing"),
        ({"window": "0", "mask": "window"}, "window", "1", "out_of_range"),
        ({"rope": "rotary"}, "rope", "none", "not_choice"),
        ({"mask": "diagonal"}, "mask", "full", "not_choice"),
        ({"alibi": "maybe"}, "alibi", "false", "not_bool"),
        ({"sinks": "-1"}, "sinks", "0", "out_of_range"),
    ],
)
def test_a_link_value_that_cannot_be_honoured_is_replaced_and_said(query, name, used, reason):
    _, replaced = lab_values(query)
    assert [(r.name, r.used, r.reason) for r in replaced] == [(name, used, reason)]


def test_what_if_rope_fewer_key_value_heads_and_a_window():
    config = LabConfig(heads=4, kv_heads=4, causal=True, mask="causal")
    assert changed_config(config, Change("rope")).rope == "half"
    assert changed_config(replace(config, rope="interleaved"), Change("rope")).rope == "none"
    assert [changed_config(replace(config, kv_heads=n), Change("kv_heads")).n_kv_heads for n in (4, 2, 1)] == [2, 1, 4]
    assert changed_config(config, Change("window")).mask_kind == "window"
    assert changed_config(replace(config, mask="window"), Change("window")).mask_kind == "causal"
    assert changed_config(replace(config, mask="sinks"), Change("causal")).mask_kind == "full"
    what = compare(config, Change("kv_heads"))
    k = next(pair for pair in what.stages if pair.step.name == "k")
    assert not k.comparable and k.base.shape == (6, 8) and k.changed.shape == (6, 4)
    base, changed = k.padded()
    assert base.shape == changed.shape == (6, 8) and np.isnan(changed[:, 4:]).all()
    q = next(pair for pair in what.stages if pair.step.name == "q")
    assert q.unchanged  # W_Q is the same: only K and V are shared
    window = compare(config, Change("window"))
    masked = next(pair for pair in window.stages if pair.step.name == "masked")
    assert masked.one_blocked.any() and torch.equal(
        torch.from_numpy(np.isneginf(masked.changed[0])), ~masks.build("window", 6, window=3)
    )


def test_classic_links_keep_their_question_digest_and_modern_ones_get_their_own():
    for causal in (False, True):
        config = LabConfig(causal=causal)
        assert state_digest(config) == state_digest(replace(config, mask="causal" if causal else "full"))
    assert state_digest(LabConfig(mask="window")) != state_digest(LabConfig(mask="window", window=2))
    assert state_digest(MODERN) != state_digest(classic(MODERN))
    result = run_lab(MODERN)
    (mask_question,) = questions_for_stage("masked", MODERN, result)
    assert mask_question.expected == frozenset(zip(*np.nonzero(~result.rule.mask.numpy()), strict=True))


def test_the_pack_carries_the_shared_heads_rotation_bias_and_rule():
    result = run_lab(MODERN)
    mats = stage_matrices(result)
    assert mats["w_k"].values.shape == (8, 4) and mats["w_k"].cols == ["d0", "d1", "d2", "d3"]
    assert mats["k"].values.shape == (10, 4) and len(mats["k"].cols) == 4
    assert {"q_rot_h4", "k_rot_kv2", "alibi_h1", "mask_allowed"} <= set(mats)
    np.testing.assert_array_equal(mats["k_rot_kv2"].values, result.steps.k_shared[1].numpy())
    loaded = np.load(io.BytesIO(npz_bytes(result)), allow_pickle=False)
    np.testing.assert_array_equal(loaded["alibi_h3"], result.steps.alibi[2].numpy())
    with zipfile.ZipFile(io.BytesIO(csv_zip_bytes(result))) as archive:
        assert "mask_allowed.csv" in archive.namelist()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_html_pack_names_the_settings_and_the_rule(lang):
    tr = translator(lang)
    page = pack_html(MODERN, run_lab(MODERN), app_url="http://localhost:8501/?mask=documents", tr=tr, lang=lang)
    for key in ("lab.kv_heads", "lab.rope_half", "lab.mask_documents"):
        assert tr(key) in page
    assert "(T, H_kv·d_k) = (10, 4)" in page and "doc(j) = doc(i)" in page and "B<sub>ij</sub>" in page


def notebook_figures(query: str) -> tuple[list, list[str]]:
    """Run a Playground notebook's setup and figure cells in this process; its figures and markdown."""
    nb = json.loads(from_query("", query))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    scope: dict = {}
    exec(code[1], scope)  # the settings and the run (code[0] installs attnlab where it is missing)
    return [eval(source, scope) for source in code[2:]], markdown


def test_the_notebook_of_a_modern_link_rebuilds_the_runs_figures_in_the_pages_order():
    figures, markdown = notebook_figures(
        "text=<BOS>+I+like+you+<EOS>+<BOS>+you+like+me+<EOS>&heads=4&kv_heads=2&rope=half&alibi=true&mask=documents"
    )
    assert len(figures) == len(NAMES) + 3  # RoPE's rotation and angles in the scores, ALiBi's bias in the mask
    result = run_lab(MODERN)
    z = [[_decode(trace["z"]) for trace in fig.to_plotly_json()["data"]] for fig in figures]
    # the notebook's run is this run, drawn: the same float64 numbers, so numpy's default rtol (1e-7) is room enough
    np.testing.assert_allclose(z[3][0], result.steps.v.numpy())  # V: the two shared heads only
    np.testing.assert_allclose(z[4][1], result.steps.heads.q[0].numpy())  # q rotated, then k and k rotated
    np.testing.assert_allclose(z[4][3], result.steps.k_shared[0].numpy())
    np.testing.assert_allclose(z[5][0][3], 3 * torch.pow(10000.0, -torch.arange(0, 2, 2) / 2).numpy())  # angles
    np.testing.assert_allclose(z[8][0], result.steps.alibi[0].numpy())  # ALiBi's bias, head 1, before the mask
    masked = by_name("masked").matrix(result)[0].numpy()
    np.testing.assert_allclose(z[9][0][np.isfinite(masked)], masked[np.isfinite(masked)])


def test_the_notebook_says_what_the_link_asked_for_that_the_text_cannot_honour():
    _, markdown = notebook_figures("text=a+b+c&d_model=6&heads=2&rope=half&kv_heads=3&mask=prefix&prefix=9")
    said = next(m for m in markdown if "kv_heads=3" in m)
    assert "rope=half" in said and "prefix=9" in said
