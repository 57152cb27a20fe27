"""The Language model page's contract-19 sections through AppTest: the lens, the attribution and the sampler draw
attnlab.lm's own numbers, the default link draws no more charts than before, and bad values are said and kept.

The small two-checkpoint run of tests/app/test_lm.py (`write_run`) is offered to the page.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab import lm as lmlib
from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32
from attnlab.lmlab import branching, reading
from attnlab.ui.app.i18n import catalog
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, open_page
from tests.app.conftest import texts as messages
from tests.app.test_lm import PAGE, TEXT, chart, write_run
from tests.near import assert_near


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> str:
    """The small model's two-checkpoint run, offered to the page for this module's tests."""
    folder = tmp_path_factory.mktemp("lmrun")
    write_run(folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTNLAB_LM_MODELS", str(folder))
        yield str(folder)


TODAY = {"painted", "top", "model_chart", "scores"}  # the default link's charts
FOLDED = {"stream", "cache", "curve_loss", "curve_copy", "curve_heads"}  # the sink and training sections, once opened
NEW = ("lens_chart", "parts_chart", "branch_chart")
ROUNDED = 5e-5  # a grid's colours go to the browser with 4 digits (attnlab.figures.lm_grids)


def keys(at) -> list[str]:
    return [c.proto.id.rsplit("-lm.", 1)[-1] for c in at.get("plotly_chart")]


def test_the_default_link_draws_the_charts_it_drew_before_and_no_new_one(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT)
    assert_clean(at)
    assert set(keys(at)) == TODAY
    assert at.query_params["open"] == "" and at.query_params["top_k"] == "none" and at.query_params["top_p"] == "none"
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, open="lens,attribution,branches")
    assert_clean(at)
    assert set(keys(at)) == TODAY | set(NEW)
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, open="sinks,training")
    assert_clean(at)
    assert set(keys(at)) == TODAY | FOLDED


def test_the_lens_grid_is_the_models_lens_and_its_last_row_the_output(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, open="lens", q="3")
    assert_clean(at)
    lm = lmlib.load(run)
    ids = lm.encode(TEXT)
    probs = torch.softmax(lm.lens(ids).double(), -1)  # (L + 1, T, V)
    heat = chart(at, "lens_chart")["data"][0]
    z = _decode(heat["z"])
    width, rows = z.shape[1], lm.n_layers + 2  # per block: the text, then every layer's row
    for start in range(0, len(ids), width):
        block = z[start // width * rows : (start // width + 1) * rows]
        assert np.isnan(block[0]).all()  # the text row has no colour
        stop = min(len(ids), start + width)
        want = probs[:, start:stop].max(-1).values.numpy()
        assert_near(block[1:, : stop - start], want, (ROUNDED + TOL_FLOAT32, RTOL_FLOAT32))  # float32, 4 digits sent
    out = [c.replace("<b>", "").replace("</b>", "") for c in heat["text"][rows - 1][: min(width, len(ids))]]
    guesses = [lm.token(i) for i in lm.forward(torch.tensor([ids])).logits[0].argmax(-1).tolist()]
    assert out == [g if g != "<bos>" else "▶" for g in guesses[: len(out)]]


def test_the_bars_are_the_attribution_and_sum_to_the_logit(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, open="attribution", q="4")
    assert_clean(at)
    lm = lmlib.load(run)
    ids = lm.encode(TEXT)
    logits = lm.forward(torch.tensor([ids])).logits[0, 3]
    token = int(logits.argmax())
    parts = lm.attribution(ids, 3, token)
    bars = chart(at, "parts_chart")["data"]
    drawn = {y: x for trace in bars for y, x in zip(trace["y"], _decode(trace["x"]), strict=True)}
    assert math.isclose(sum(drawn.values()), float(logits[token]), abs_tol=1e-4)
    heads = {k: v for k, v in parts.items() if k[0].isdigit() and k.split(".")[1].isdigit()}
    for name, value in heads.items():
        layer, head = (int(x) + 1 for x in name.split("."))
        label = next(y for y in drawn if y.split(" ")[0] == f"{layer}.{head}")
        assert math.isclose(drawn[label], value, abs_tol=1e-9)
    said = catalog(lang)["lm.push_sum"]
    assert any(said.split("{")[0] in str(c.value) for c in at.caption)


def test_a_typed_character_is_taken_apart_and_one_the_vocabulary_lacks_is_said_and_kept(run):
    at = open_page(PAGE, lang="zh", model=run, text=TEXT, open="attribution", target="红")
    assert_clean(at)
    lm = lmlib.load(run)
    ids = lm.encode(TEXT)
    want = float(lm.forward(torch.tensor([ids])).logits[0, -1, lm.token_id("红")])
    bars = chart(at, "parts_chart")["data"]
    assert math.isclose(sum(float(x) for tr in bars for x in _decode(tr["x"])), want, abs_tol=1e-4)
    at.text_input(key="lm.target").set_value("霜x").run()
    assert_clean(at)
    said = "\n".join(messages(at, "warning"))
    assert "`霜x`" in said and at.text_input(key="lm.target").value == "霜x" and at.query_params["target"] == "霜x"


def test_top_k_and_top_p_cut_the_top_ten_and_the_generation_as_the_library_does(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, temperature="0.9", top_k="3", seed="5")
    assert_clean(at)
    lm = lmlib.load(run)
    got = reading.read(lm, TEXT)
    best = reading.top_of(lm, got.last_logits, 10, 0.9, 3, None)
    bars = chart(at, "lm.top")["data"]
    assert_near(_decode(bars[1]["x"]), np.array(best.tempered))  # the page drew these very numbers
    assert int((_decode(bars[1]["x"]) > 0).sum()) == 3 and best.kept == 3
    for _ in range(3):
        at.button(key="lm.next_button").click().run()
    made = lm.generate(TEXT, 3, 0.9, 5, top_k=3)
    first = made.steps[0].probs  # generation's first step draws from what the top ten's second bars show
    assert_near(np.sort(first[first > 0]), np.sort([p for p in best.tempered if p > 0]), (TOL_FLOAT32, RTOL_FLOAT32))
    assert any(f"`{made.text}`" in str(m.value) for m in at.markdown)
    at.number_input(key="lm.top_k").set_value(0).run()  # typed into the box: said, kept, no cut used
    assert_clean(at)
    assert catalog(lang)["lm.top_k_bad"].format(typed="0") in messages(at, "warning")
    assert at.number_input(key="lm.top_k").value == 0


def test_bad_sampling_values_in_a_link_are_replaced_and_said(run):
    at = open_page(PAGE, lang="en", model=run, text=TEXT, top_k="0", top_p="1.5", temps="0,hot", pick="x", open="y")
    assert_clean(at)
    said = "\n".join(messages(at, "warning"))
    for asked in ("top_k=0", "top_p=1.5", "temps=0,hot", "pick=x", "open=y"):
        assert f"`{asked}`" in said, asked
    assert at.query_params["top_k"] == "none" and at.query_params["top_p"] == "1"
    assert at.query_params["temps"] == "0,0.7,1.2" and at.query_params["pick"] == ""
    at = open_page(PAGE, lang="zh", model=run, text=TEXT, top_p="0")
    assert "`top_p=0`" in "\n".join(messages(at, "warning")) and at.query_params["top_p"] == "none"


def test_the_branches_are_the_batched_generations_and_going_on_from_an_alternative(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, open="branches", temps="0,0.8,1.5", seed="3", pick="2.3")
    assert_clean(at)
    lm = lmlib.load(run)
    rows = lm.branches(TEXT, branching.BRANCH_CHARS, [0.0, 0.8, 1.5], 3)
    spec = chart(at, "branch_chart")
    text = spec["data"][0]["text"]
    width = len(text[0])
    drawn = ["".join(text[b + 3 * k][i] for k in range(len(text) // 3) for i in range(width)) for b in range(3)]
    for row, mine in zip(rows, drawn, strict=True):
        assert mine == row.text.replace(" ", "␣").replace("\n", "↵")[: len(mine)]
    alts = branching.alternatives(lm, TEXT + rows[1].text[:2])
    at.button(key="lm.alt_1").click().run()
    assert_clean(at)
    assert at.query_params["branch"] == rows[1].text[:2] + alts[1][1] and at.query_params["pick"] == ""
    again = lm.branches(TEXT + at.query_params["branch"], branching.BRANCH_CHARS, [0.0, 0.8, 1.5], 3)
    first = chart(at, "branch_chart")["data"][0]["text"][0][0]
    assert first == again[0].text[0].replace(" ", "␣").replace("\n", "↵")


def test_a_branch_past_the_context_or_off_the_vocabulary_is_said_and_kept(run):
    long = "寂" * 120
    at = open_page(PAGE, lang="zh", model=run, text=TEXT, open="branches", branch=long)
    assert_clean(at)
    said = "\n".join(messages(at, "warning"))
    assert catalog("zh")["lm.branch_past"].split("{")[0] in said
    assert at.text_input(key="lm.branch").value == long and "branch_chart" not in keys(at)
    at = open_page(PAGE, lang="en", model=run, text=TEXT, open="branches", branch="😀", pick="9.40")
    assert_clean(at)
    said = "\n".join(messages(at, "warning"))
    assert "`😀`" in said and "`9.40`" in said and at.text_input(key="lm.branch").value == "😀"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_shipped_runs_open_every_section_in_both_languages(lang):
    at = open_page(PAGE, lang=lang, open="lens,attribution,branches", top_k="20", top_p="0.9", temperature="0.7")
    assert_clean(at)
    assert set(NEW) <= set(keys(at)) and len(figures(at)) == len(TODAY) + len(NEW)


def test_hostile_targets_and_branches_are_said_as_text_and_kept(run):
    from tests.app.test_hostile_links import HOSTILE, LIVE, messages, outside_code

    for label in ("markdown", "html", "control"):
        raw = HOSTILE[label]
        at = open_page(PAGE, lang="en", model=run, text=TEXT, open="lens,attribution,branches", target=raw, branch=raw)
        assert_clean(at)
        for text in messages(at):
            assert not [m for m in LIVE if m in outside_code(text)], (label, text)
        assert at.text_input(key="lm.branch").value == raw  # what the link said stays in its box
        assert at.text_input(key="lm.target").value == raw[:16]  # a target is one token: the link keeps 16 characters
