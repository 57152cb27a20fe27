"""Presenter mode: every step in both languages, questions graded against matrices computed here with plain torch."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from attnlab.pipeline import LabConfig, run_lab
from attnlab.stages import N_STEPS, STEPS
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.present import presenter as present
from tests.app.charts import heatmap_values
from tests.app.conftest import PLAYGROUND, assert_clean, open_page, texts

PRESENT = "views/present.py"
TEXT = "the cat sat on the mat"


def button(at, lang: str, key: str):
    """The (form submit) button whose label is the catalog string `key`."""
    label = catalog(lang)[key]
    found = [b for b in at.button if b.label == label]
    assert found, (label, [b.label for b in at.button])
    return found[0]


def weights_by_torch(config: LabConfig, head: int) -> torch.Tensor:
    """One head's softmax weights from X and the weight matrices alone, with SDPA's conventions."""
    result = run_lab(config)
    x, w = result.x.double(), result.weights
    d_k = config.d_model // config.heads
    cols = slice(head * d_k, (head + 1) * d_k)
    q, k = x @ w.w_q.double()[:, cols], x @ w.w_k.double()[:, cols]  # (T, d_k)
    scores = q @ k.T / math.sqrt(d_k)
    if config.causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1)


@pytest.mark.parametrize("step", range(1, N_STEPS + 1))
def test_every_step_draws_its_stage_in_both_languages(step, lang):
    at = open_page(PRESENT, step=str(step), lang=lang, quiz="false")
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 1
    strings = catalog(lang)
    assert any(m.value == f"## {step}. {strings[f'present.step.{step}.title']}" for m in at.markdown)
    assert any(strings["present.ui.step_of"].format(k=step, n=N_STEPS) in m.value for m in at.markdown)
    stage = STEPS[step - 1]  # the core's stage of that number: the chart shows its matrix, every head's panel
    expected = stage.matrix(run_lab(LabConfig())).numpy()
    expected = list(expected) if stage.per_head else [expected]
    panels = heatmap_values(at, 0)
    assert len(panels) == len(expected)
    for shown, m in zip(panels, expected, strict=True):
        assert np.allclose(shown, np.where(np.isneginf(m), np.nan, m), atol=1e-6, equal_nan=True), stage.name


def test_next_and_previous_move_the_step_and_the_link():
    at = open_page(PRESENT, step="1", quiz="false")
    button(at, "en", "present.ui.next").click().run()
    assert at.query_params["step"] == "2" and len(at.get("plotly_chart")) == 1
    button(at, "en", "present.ui.previous").click().run()
    assert at.query_params["step"] == "1"


@pytest.mark.parametrize("raw", ["0", "12", "eight", "1e9"])
def test_a_step_outside_1_to_11_is_replaced_and_said(raw, lang):
    at = open_page(PRESENT, step=raw, lang=lang)
    assert_clean(at)
    assert any(f"step={raw}" in w for w in texts(at, "warning"))


def test_the_shape_question_hides_q_until_answered_and_grades_it(lang):
    at = open_page(PRESENT, step="2", text=TEXT, lang=lang)
    assert not at.get("plotly_chart")
    t_len, d_model = len(TEXT.split()), LabConfig().d_model
    at.text_input[0].input(f"{d_model}×{t_len}")  # rows and columns swapped
    button(at, lang, "present.ui.check").click().run()
    assert_clean(at)
    assert texts(at, "error") and len(at.get("plotly_chart")) == 1
    assert at.metric[0].value == "0 / 1"


def test_a_right_answer_in_full_width_digits_is_read_and_scored():
    at = open_page(PRESENT, step="2", text=TEXT)
    at.text_input[0].input(
        f"（{len(TEXT.split())}，{LabConfig().d_model}）".translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    )
    button(at, "en", "present.ui.check").click().run()
    assert texts(at, "success") and not texts(at, "error")
    assert at.metric[0].value == "1 / 1"


def test_an_unreadable_answer_is_refused_with_the_expected_form_and_kept(lang):
    at = open_page(PRESENT, step="2", text=TEXT, lang=lang)
    at.text_input[0].input("five by eight")
    button(at, lang, "present.ui.check").click().run()
    assert_clean(at)
    assert catalog(lang)["present.error.shape_form"] in texts(at, "warning")
    assert at.text_input[0].value == "five by eight" and not at.get("plotly_chart")
    assert at.metric[0].value == "0 / 0"


@pytest.mark.parametrize("causal", [False, True])
def test_the_argmax_question_is_graded_against_torch_weights(causal):
    config = LabConfig(text=TEXT, causal=causal)
    at = open_page(PRESENT, step="8", text=TEXT, causal=str(causal).lower(), quiz="true")
    prompt = next(m.value for m in at.markdown if "largest weight" in m.value)
    row = int(re.search(r"row (\d+)\)", prompt).group(1)) - 1
    weights = weights_by_torch(config, head=0)[row]  # (T,)
    best, worst = int(weights.argmax()), int(weights.argmin())
    box = [ti for ti in at.text_input if ti.label == catalog("en")["present.ui.your_answer"]]
    box[0].input(str(worst + 1))
    button(at, "en", "present.ui.check").click().run()
    assert texts(at, "error")  # the least-weighted key is wrong
    at2 = open_page(PRESENT, step="8", text=TEXT, causal=str(causal).lower())
    [ti for ti in at2.text_input if ti.label == catalog("en")["present.ui.your_answer"]][0].input(str(best + 1))
    button(at2, "en", "present.ui.check").click().run()
    said = [s.replace("\\", "") for s in texts(at2, "success")]  # the message escapes markdown: 0\.31
    assert any(f"{float(weights[best]):.2f}" in s for s in said), said


def test_the_mask_question_takes_ticked_cells(lang):
    at = open_page(PRESENT, step="7", text="a b c", causal="true", lang=lang)
    above = [(i, j) for i in range(3) for j in range(3) if j > i]  # what a causal mask blocks, by definition
    at.multiselect[0].set_value(above)
    button(at, lang, "present.ui.check").click().run()
    assert texts(at, "success") and len(at.get("plotly_chart")) == 1
    at = open_page(PRESENT, step="7", text="a b c", causal="true", lang=lang)
    at.multiselect[0].set_value([(j, i) for i, j in above])
    button(at, lang, "present.ui.check").click().run()
    assert texts(at, "error")


def test_just_show_it_reveals_without_scoring():
    at = open_page(PRESENT, step="2", text=TEXT)
    button(at, "en", "present.ui.reveal").click().run()
    assert len(at.get("plotly_chart")) == 1 and at.metric[0].value == "0 / 0"


def test_questions_off_shows_every_matrix_at_once():
    for step in (2, 6, 7, 8):
        at = open_page(PRESENT, step=str(step), causal="true", quiz="false")
        assert len(at.get("plotly_chart")) == 1 and not at.form


def test_html_text_in_the_sentence_stays_text_in_questions():
    at = open_page(PRESENT, step="8", text="<b>x</b> [a](http://e.x) y")
    assert_clean(at)
    prompts = [m.value for m in at.markdown if "largest weight" in m.value]
    assert prompts and all("](http" not in p for p in prompts)


def test_the_sidebars_settings_and_pack_are_built_once_opened_and_the_settings_still_drive_the_matrix(lang):
    """Folded, the Playground's widgets and the pack's buttons are not sent (issue 61: they cost a phone's first
    chart); opened, a text typed there redraws the step's matrix and goes into the link."""
    at = open_page(PRESENT, step="5", text=TEXT, quiz="false", lang=lang)
    frame_buttons = len(at.sidebar.get("download_button"))  # the page's notebook, beside every page
    assert not at.sidebar.text_input and not at.sidebar.number_input and not at.sidebar.selectbox
    at.session_state[present.SETTINGS_OPEN] = True
    at.run()
    assert_clean(at)
    assert at.text_input(key="lab.text").value == TEXT
    at.text_input(key="lab.text").input("I like you").run()
    expected = STEPS[4].matrix(run_lab(LabConfig(text="I like you"))).numpy()
    assert [m.shape for m in heatmap_values(at, 0)] == [m.shape for m in expected]  # three tokens now, per head
    assert at.query_params["text"] == "I like you"
    at.session_state[present.PACK_OPEN] = True
    at.run()
    assert len(at.sidebar.get("download_button")) == frame_buttons + 3  # the HTML pack, the NPZ and the CSV zip


def test_the_sidebars_settings_take_a_row_each(lang):
    """In the sidebar's 240 px, three columns cut the controls' labels (issue 61's notes): opened, no setting sits in
    a column, and every one the Playground has is there, the switches with their labels."""
    at = open_page(PRESENT, step="5", text=TEXT, quiz="false", lang=lang)
    at.session_state[present.SETTINGS_OPEN] = True
    at.run()
    assert_clean(at)
    assert not at.sidebar.columns
    assert {w.key for w in at.sidebar.number_input} >= {"lab.d_model", "lab.seed"}
    assert {w.key for w in at.sidebar.selectbox} >= {"lab.heads", "lab.kv_heads", "lab.rope", "lab.mask"}
    assert [w.label for w in at.sidebar.toggle if w.key in {"lab.causal", "lab.pe", "lab.alibi"}] == [
        catalog(lang)[name] for name in ("lab.causal", "lab.pe", "lab.alibi")
    ]
    playground = open_page(PLAYGROUND, lang=lang)
    assert playground.main.columns  # the same controls side by side where there is room
