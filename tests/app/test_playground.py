"""The Playground through AppTest: every widget path, URL state in and out, and the bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.pipeline import LabConfig, run_lab
from attnlab.ui.app.i18n import catalog
from attnlab.ui.app.text import code
from tests.app.charts import blocked_cells, figures, heatmap_values
from tests.app.conftest import assert_clean, open_page, texts

X, Q, SCORES, MASKED, WEIGHTS, OUT = 0, 1, 4, 6, 7, 10
EDITOR = "lab.editor.w_q.all.0"


def test_default_page_renders_every_stage_and_passes_the_check(lang):
    at = open_page(lang=lang)
    assert_clean(at)
    assert at.title[0].value == catalog(lang)["lab.title"]
    assert len(at.get("plotly_chart")) == 11
    assert catalog(lang)["lab.check_pass"] in texts(at, "success")
    expected = run_lab(LabConfig())
    np.testing.assert_allclose(heatmap_values(at, X)[0], expected.x.numpy())
    np.testing.assert_allclose(heatmap_values(at, OUT)[0], expected.steps.output.numpy())


def test_the_check_table_lists_every_heads_error_against_pytorch(lang):
    from attnlab.labcheck import check_against_torch
    from attnlab.ui.app.text import md_escape

    at = open_page(lang=lang, heads="4", d_model="8")
    check = check_against_torch(run_lab(LabConfig(heads=4)))
    table = [m.value for m in at.sidebar.markdown if "SDPA" in m.value][0]
    rows = table.splitlines()[2:]
    assert len(rows) == 5 and "W\\_O ↔ MHA" in rows[-1]
    for row, err in zip(rows, [*check.sdpa_per_head, check.mha], strict=True):
        assert md_escape(f"{err:.1e}") in row


def test_url_state_reproduces_the_senders_matrices():
    at = open_page(text="<BOS> I like you <EOS>", d_model="16", heads="4", causal="1", seed="7", pe="true")
    assert_clean(at)
    assert not texts(at, "warning")
    expected = run_lab(LabConfig("<BOS> I like you <EOS>", 16, 4, True, 7, "random", True))
    assert len(heatmap_values(at, SCORES)) == 4  # all four heads side by side
    for h in range(4):
        np.testing.assert_allclose(heatmap_values(at, WEIGHTS)[h], expected.steps.heads.weights[h].numpy())
        assert (blocked_cells(at, MASKED)[h] == np.triu(np.ones((5, 5), bool), 1)).all()
    np.testing.assert_allclose(heatmap_values(at, OUT)[0], expected.steps.output.numpy())
    assert at.query_params["causal"] == "true" and at.query_params["heads"] == "4"


@pytest.mark.parametrize(
    ("query", "field", "used"),
    [
        ({"heads": "zero"}, "heads", 2),
        ({"d_model": "-3"}, "d_model", 2),
        ({"d_model": "100000"}, "d_model", 64),
        ({"d_model": "8", "heads": "3"}, "heads", 2),
        ({"seed": "1e999"}, "seed", 0),
        ({"causal": "maybe"}, "causal", False),
        ({"init": "ones"}, "init", "random"),
    ],
)
def test_url_values_that_cannot_be_honoured_are_named_and_replaced(query, field, used):
    at = open_page(lang="zh", **query)
    assert_clean(at)
    warnings = texts(at, "warning")
    assert any(field in w and str(used).lower() in w for w in warnings), warnings
    assert at.session_state[f"lab.{field}"] == used
    assert len(at.get("plotly_chart")) == 11


def test_unknown_language_in_the_url_falls_back_to_english_and_says_so():
    at = open_page(lang="fr")
    assert_clean(at)
    assert at.title[0].value == catalog("en")["lab.title"]
    assert any("`lang=fr`" in w for w in texts(at, "warning"))


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_asks_for_input_and_computes_nothing(lang, text):
    at = open_page(lang=lang, text=text)
    assert_clean(at)
    assert catalog(lang)["lab.empty_text"] in texts(at, "info")
    assert not at.get("plotly_chart")
    assert at.text_input(key="lab.text").value == text


def test_more_tokens_than_the_cap_are_cut_with_a_message_naming_the_cap(lang):
    text = " ".join(f"w{i}" for i in range(80))
    at = open_page(lang=lang, text=text)
    assert_clean(at)
    assert any("64" in w and "80" in w for w in texts(at, "warning"))
    assert heatmap_values(at, X)[0].shape == (64, 8)
    assert at.text_input(key="lab.text").value == text


def test_html_emoji_and_rtl_text_is_shown_as_text():
    text = "<script>alert(1)</script> <b>bold</b> 😀 مرحبا"
    at = open_page(text=text)
    assert_clean(at)
    rows = figures(at)[X]["data"][0]["y"]  # the token labels Plotly is given, read from the figure's data
    assert "&lt;b&gt;" in rows and "<b>" not in "".join(rows)
    assert "مرحبا" in rows and "😀" in rows


def test_widgets_change_the_matrices():
    at = open_page()
    before = heatmap_values(at, WEIGHTS)
    at.toggle(key="lab.causal").set_value(True).run()
    assert_clean(at)
    assert blocked_cells(at, MASKED)[0].sum() == 15  # 6 tokens: 15 cells above the diagonal
    at.number_input(key="lab.d_model").set_value(12).run()
    at.selectbox(key="lab.heads").set_value(3).run()
    assert len(heatmap_values(at, WEIGHTS)) == 3
    at.number_input(key="lab.seed").set_value(5).run()
    at.segmented_control(key="lab.init").set_value("identity").run()
    at.toggle(key="lab.pe").set_value(True).run()
    assert_clean(at)
    expected = run_lab(LabConfig(d_model=12, heads=3, causal=True, seed=5, init="identity", positions=True))
    np.testing.assert_allclose(heatmap_values(at, X)[0], expected.x.numpy())
    assert not np.allclose(heatmap_values(at, WEIGHTS)[0], before[0])
    at.segmented_control(key="lab.head").set_value(2).run()
    np.testing.assert_allclose(heatmap_values(at, WEIGHTS)[0], expected.steps.heads.weights[1].numpy())


def test_changing_d_model_keeps_heads_dividing():
    at = open_page(heads="4")
    at.number_input(key="lab.d_model").set_value(6).run()
    assert_clean(at)
    assert at.session_state["lab.heads"] == 3


def test_language_switch_translates_the_page():
    at = open_page()
    at.sidebar.segmented_control[0].set_value("zh").run()
    assert_clean(at)
    assert at.title[0].value == catalog("zh")["lab.title"]
    assert at.query_params["lang"] == "zh"


def open_editor(at):
    """Switch the weight editor on (it is built and sent only when open)."""
    return at.toggle(key="lab.editor_open").set_value(True).run()


def _edit(at, changes: dict) -> None:
    at.session_state[EDITOR] = {"edited_rows": changes, "added_rows": [], "deleted_rows": []}
    at.run()


def test_editing_a_cell_updates_every_stage_and_the_url():
    at = open_page()
    _edit(at, {0: {"d1": 0.5}})
    assert_clean(at)
    cfg = LabConfig(edits=((("w_q", 0, 1), 0.5),))
    expected = run_lab(cfg)
    assert expected.weights.w_q[0, 1] == 0.5
    np.testing.assert_allclose(heatmap_values(at, Q)[0], expected.steps.q.numpy())
    np.testing.assert_allclose(heatmap_values(at, OUT)[0], expected.steps.output.numpy())
    assert at.query_params["edits"] == "q0.1=0.5"
    shared = open_page(edits="q0.1=0.5")
    np.testing.assert_allclose(heatmap_values(shared, OUT)[0], expected.steps.output.numpy())


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("abc", "cell_not_number"),
        (float("nan"), "cell_empty"),
        ("inf", "cell_not_finite"),
        (1e9, "cell_too_large"),
        (None, "cell_empty"),
    ],
)
def test_bad_cells_are_refused_by_name_and_keep_their_value(lang, raw, reason):
    at = open_page(lang=lang)
    before = heatmap_values(at, Q)[0]
    _edit(at, {2: {"d3": raw}})
    assert_clean(at)
    errors = texts(at, "error")
    assert any("W_Q[2, 3]" in e for e in errors), errors
    assert catalog(lang)[f"lab.{reason}"].format(cell="W_Q[2, 3]", raw=code(str(raw)), cap="1000") in errors
    np.testing.assert_allclose(heatmap_values(at, Q)[0], before)


def test_reset_returns_to_the_seeded_weights():
    at = open_editor(open_page(edits="q0.1=0.5;o2.2=-3"))
    edited = heatmap_values(at, OUT)[0]
    reset = [b for b in at.button if b.label == catalog("en")["lab.reset"]][0]
    reset.click().run()
    assert_clean(at)
    np.testing.assert_allclose(heatmap_values(at, OUT)[0], run_lab(LabConfig()).steps.output.numpy())
    assert not np.allclose(edited, heatmap_values(at, OUT)[0])
    assert "edits" not in at.query_params


def test_bad_edits_in_the_url_are_reported():
    at = open_page(edits="q0.1=0.5;q99.0=1;zz")
    assert_clean(at)
    assert any("q99.0=1" in w and "zz" in w for w in texts(at, "warning"))


def test_uploaded_weights_replace_the_matrices_and_set_d_model():
    from attnlab.multihead import MultiHeadWeights
    from attnlab.weights_io import to_json

    uploaded = MultiHeadWeights.random(4, seed=99)
    at = open_editor(open_page())
    at.file_uploader(key="lab.upload").set_value(("mine.json", to_json(uploaded), "application/json")).run()
    assert_clean(at)
    assert at.session_state["lab.d_model"] == 4
    assert heatmap_values(at, X)[0].shape == (6, 4)
    expected = run_lab(LabConfig(d_model=4))
    np.testing.assert_allclose(heatmap_values(at, Q)[0], (expected.x @ uploaded.w_q).numpy())
    shared = open_page(**{k: at.query_params[k] for k in at.query_params})  # 64 cells fit in the link
    np.testing.assert_allclose(heatmap_values(shared, OUT)[0], heatmap_values(at, OUT)[0])


def test_the_weights_uploader_keeps_its_own_small_cap_under_the_servers_larger_one():
    from attnlab.limits import MAX_ATTN_UPLOAD_MB, MAX_UPLOAD_BYTES

    uploader = open_editor(open_page()).file_uploader(key="lab.upload")
    assert uploader.proto.max_upload_size_mb * 2**20 == MAX_UPLOAD_BYTES < MAX_ATTN_UPLOAD_MB * 2**20


def test_weights_past_the_link_cap_are_not_put_in_the_url_and_the_page_says_so():
    from attnlab.multihead import MultiHeadWeights
    from attnlab.weights_io import to_json

    at = open_editor(open_page())
    at.file_uploader(key="lab.upload").set_value(("big.json", to_json(MultiHeadWeights.random(16, 5)), "x")).run()
    assert_clean(at)
    assert "edits" not in at.query_params
    assert any("1024" in i and "256" in i for i in texts(at, "info"))


def test_a_pickled_upload_is_refused_and_the_weights_stay(lang):
    import pickle

    at = open_editor(open_page(lang=lang))
    before = heatmap_values(at, OUT)[0]
    at.file_uploader(key="lab.upload").set_value(("evil.json", pickle.dumps([1, 2]), "application/json")).run()
    assert_clean(at)
    assert catalog(lang)["lab.upload_pickle_refused"] in texts(at, "error")
    np.testing.assert_allclose(heatmap_values(at, OUT)[0], before)


def test_picking_a_token_outlines_its_row_in_every_stage():
    at = open_page(text="I like you")
    assert not any(fig["layout"].get("shapes") for fig in figures(at)[4:9])
    at.pills(key="lab.query").set_value(1).run()
    assert_clean(at)
    for fig in figures(at):
        rects = [s for s in fig["layout"].get("shapes", []) if s["type"] == "rect"]
        assert rects and all(r["y0"] == 0.5 and r["y1"] == 1.5 for r in rects)


def test_settings_and_edits_survive_a_trip_to_another_page():
    at = open_page(text="I like you", d_model="12", heads="3", seed="4")
    _edit(at, {0: {"d1": 0.5}})
    edited = heatmap_values(at, OUT)[0]
    at.switch_page("views/scaling.py").run()
    assert_clean(at)
    at.switch_page("views/playground.py").run()
    assert_clean(at)
    assert at.text_input(key="lab.text").value == "I like you"
    assert at.session_state["lab.d_model"] == 12 and at.session_state["lab.heads"] == 3
    np.testing.assert_allclose(heatmap_values(at, OUT)[0], edited)
    assert at.query_params["edits"] == "q0.1=0.5"


def test_the_sidebar_offers_the_link_to_this_exact_view_once_opened():
    at = open_page(text="I like you", causal="true", lang="zh")
    assert not at.sidebar.code  # closed: the code box (and the large script that draws it) is not sent
    at.session_state["app.share_open"] = True
    link = at.run().sidebar.code[-1].value
    assert "text=I%20like%20you" in link and "causal=true" in link and "lang=zh" in link


def test_the_offline_packs_downloads_are_built_once_their_box_is_opened():
    at = open_page(text="I like you")
    assert not at.main.get("download_button")  # folded: nothing of the pack is sent (issue 61)
    at.session_state["lab.pack_open"] = True
    labels = [b.proto.label for b in at.run().main.get("download_button")]
    assert labels == [catalog("en")["present.ui.pack_html"], "NPZ", "CSV (zip)"]


def test_many_heads_are_shown_a_few_at_a_time_and_every_group_is_reachable():
    from attnlab.ui.parts.stages import head_groups, panels_per_view

    text = " ".join(f"w{i}" for i in range(64))
    at = open_page(text=text, d_model="64", heads="64")
    assert_clean(at)
    per_chart = panels_per_view(64)
    assert per_chart < 8
    assert max(len(heatmap_values(at, i)) for i in range(11)) == per_chart
    groups = head_groups(64, 64)
    at.selectbox(key="lab.head").set_value(-(len(groups) - 1)).run()  # the last group
    expected = run_lab(LabConfig(text, 64, 64)).steps.heads.weights
    shown = heatmap_values(at, WEIGHTS)
    assert len(shown) == len(groups[-1])
    for panel, h in zip(shown, groups[-1], strict=True):
        np.testing.assert_allclose(panel, expected[h].numpy(), atol=1e-6)  # big charts travel as float32
    assert at.query_params["head"] == str(-(len(groups) - 1))


def test_a_head_the_text_does_not_have_is_replaced_and_said(lang):
    at = open_page(lang=lang, heads="2", head="7")
    assert_clean(at)
    assert any("`head=7`" in w for w in texts(at, "warning"))
    assert at.session_state["lab.head"] == 0 and len(heatmap_values(at, WEIGHTS)) == 2


def test_the_weight_editor_is_built_only_when_opened_and_opens_itself_for_a_refused_cell():
    at = open_page()
    assert not at.dataframe and not at.get("file_uploader")  # closed: no grid (the check table is markdown)
    at = open_editor(at)
    assert len(at.dataframe) == 1 and at.get("file_uploader")
    at.toggle(key="lab.editor_open").set_value(False).run()
    _edit(at, {0: {"d1": "abc"}})
    assert at.toggle(key="lab.editor_open").value and any("W_Q[0, 1]" in e for e in texts(at, "error"))
