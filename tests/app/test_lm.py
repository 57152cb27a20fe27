"""The Language model page through AppTest: its numbers are attnlab.lm's own, its bad links are replaced and said.

A small random model is written once per module as a training run would write it (two checkpoints, log.json and
metrics.json measured with attnlab.lm.metrics on the checkpoints themselves) and offered through ATTNLAB_LM_MODELS,
so the page's every section runs in a fraction of the shipped runs' time; the shipped runs are opened as a visitor
without a link opens them, in each language.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnlab import lm as lmlib
from attnlab.lm.checkpoint import save_weights
from attnlab.lm.loading import checkpoint_path
from attnlab.lm.metrics import copying, model_loss
from attnlab.lmlab import reading, streaming, texts
from attnlab.lmlab.stages import layer_steps
from attnlab.ui.app.i18n import catalog
from attnlab.ui.parts.stages import STAGES
from tests.app.charts import _decode, figures, heatmap_values
from tests.app.conftest import assert_clean, metric, open_page
from tests.app.conftest import texts as messages
from tests.unit.test_lmlab import tiny

PAGE = "views/lm.py"
TEXT = "宫花寂寞红。宫花"
POSITIONS = 100  # room for contract 16's copy measures: 48-character passages written twice after <bos>
PASSAGE = (texts.first_text("zh") * 2)[:48]  # every character in the small model's vocabulary


def model(step: int):
    return tiny(step, max_position_embeddings=POSITIONS)


def write_run(folder) -> None:
    """A two-checkpoint run folder of the small model, as a training run writes one."""
    (folder / "checkpoints").mkdir()
    records = []
    held = np.asarray(model(0).encode(texts.held_out("zh"))[1:], dtype=np.int64)
    for step in (1, 2):
        lm = model(step)
        path = folder / "model.safetensors" if step == 2 else checkpoint_path(folder, step)
        save_weights(lm.model, path)
        copy = copying(lm, [PASSAGE], [])
        records.append({"step": step, "held_out_loss": model_loss(lm.model, held, POSITIONS, 0), **copy})
    lm.save_pretrained(folder)  # config.json, chars.json (model.safetensors again: step 2's)
    log = {"steps": [1, 2], "checkpoints": [{k: v for k, v in r.items() if k != "copy_passages"} for r in records]}
    (folder / "log.json").write_text(json.dumps(log, default=float))
    (folder / "metrics.json").write_text(json.dumps(records[-1], default=float, ensure_ascii=False))


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> str:
    """The small model's run folder, offered to the page for this module's tests."""
    folder = tmp_path_factory.mktemp("lmrun")
    write_run(folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTNLAB_LM_MODELS", str(folder))
        yield str(folder)


def chart(at, key: str) -> dict:
    """The spec of the chart whose widget key ends with `key`."""
    keys = [c.proto.id for c in at.get("plotly_chart")]
    found = [f for f, k in zip(figures(at), keys, strict=True) if key in k]
    assert found, key
    return found[0]


def test_the_page_paints_the_models_losses_and_lists_its_top_ten(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, q="3", temperature="0.5")
    assert_clean(at)
    lm = lmlib.load(run)
    got = reading.read(lm, TEXT)
    painted = _decode(chart(at, "painted")["data"][0]["z"]).ravel()
    np.testing.assert_allclose(painted[: len(TEXT)], got.losses, atol=1e-9)
    top = reading.top_at(lm, got.ids, 2, 10, 0.5)
    bars = chart(at, "lm.top")["data"]
    np.testing.assert_allclose(_decode(bars[0]["x"]), top.probs, atol=1e-12)
    np.testing.assert_allclose(_decode(bars[1]["x"]), top.tempered, atol=1e-12)
    end = lm.predict(TEXT, 10)  # after the whole text: LanguageModel.predict itself
    at.selectbox(key="lm.q").set_value(0).run()
    np.testing.assert_allclose(_decode(chart(at, "lm.top")["data"][0]["x"]), end.probs, atol=1e-12)
    assert at.query_params["q"] == "0" and at.query_params["model"] == run


def test_each_press_adds_the_character_generate_gives(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, temperature="0.9", seed="7")
    for _ in range(3):
        at.button(key="lm.next_button").click().run()
    assert_clean(at)
    made = lmlib.load(run).generate(TEXT, 3, 0.9, 7)
    assert at.query_params["gen"] == "3"
    assert any(f"`{made.text.replace(chr(10), '↵')}`" in str(m.value) for m in at.markdown)
    at.button(key="lm.keep").click().run()
    assert at.text_area(key="lm.text").value == TEXT + made.text and at.query_params["gen"] == "0"


def test_written_twice_the_page_shows_both_copies_losses(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text="寂寞红。")
    at.button(key="lm.twice").click().run()
    assert_clean(at)
    assert at.query_params["text"] == "寂寞红。寂寞红。"
    first, second = reading.copies(reading.read(lmlib.load(run), "寂寞红。寂寞红。"))
    assert metric(at, lang, "lm.copy_first") == f"{first:.2f}"
    assert metric(at, lang, "lm.copy_second") == f"{second:.2f}"
    key = "copy_better" if first - second >= 0.1 else "copy_not" if second - first >= 0.1 else "copy_same"
    said = catalog(lang)[f"lm.{key}"].format(a=f"{first:.2f}", b=f"{second:.2f}", clear=0.1)
    assert said in [str(m.value) for m in at.markdown]


def test_one_heads_stages_are_the_models_own(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, layer="2", head="3")
    at.session_state["lm.inside_open"] = True
    at.run()
    assert_clean(at)
    lm = lmlib.load(run)
    ids = tuple(lm.encode(TEXT))
    steps = layer_steps(lm, ids, 1)
    keys = [c.proto.id for c in at.get("plotly_chart")]
    weights = next(i for i, k in enumerate(keys) if k.endswith("lm.st.weights"))
    np.testing.assert_allclose(heatmap_values(at, weights)[0], steps.heads.weights[2].numpy(), atol=1e-6)
    x = next(i for i, k in enumerate(keys) if k.endswith("lm.st.x"))
    np.testing.assert_allclose(heatmap_values(at, x)[0], steps.x_q.numpy(), atol=1e-6)
    reference = lm.forward(torch.tensor([list(ids)]), keep_steps=True).steps[1]
    np.testing.assert_allclose(steps.heads.weights.numpy(), reference.weights[0].numpy(), atol=1e-6)
    assert sum(k.split(".")[-1] in STAGES for k in keys if ".st." in k) == len(STAGES)


def test_the_sink_curves_are_the_streamed_losses(run, lang):
    at = open_page(PAGE, lang=lang, model=run, text=TEXT, window="16", sinks="2", open="sinks")  # folded till opened
    assert_clean(at)
    lm = lmlib.load(run)
    ids = tuple(lm.encode(texts.held_out(texts.language_of(lm, lang))))  # the passage its vocabulary knows best
    curves = chart(at, "lm.stream")["data"]
    for trace, (w, s) in zip(curves[:3], [(None, 0), (16, 0), (16, 2)], strict=True):  # then the marks
        want = streaming.running_mean(streaming.stream(lm, ids, w, s).losses, 32)
        np.testing.assert_allclose(_decode(trace["y"]), want, atol=1e-9)
    means = [streaming.stream(lm, ids, w, s).mean(18) for w, s in [(None, 0), (16, 0), (16, 2)]]
    assert metric(at, lang, "lm.m_sinks", w=16, s=2) == f"{means[2]:.2f}"


def test_a_bad_link_is_replaced_and_said_keeping_what_was_typed(run):
    typed = "宫花😀" + "寂" * 120  # an unknown character, and longer than the model's 100 positions
    at = open_page(PAGE, lang="zh", model="gpt-9", text=typed, head="0", q="-1", window="0")
    assert_clean(at)
    said = "\n".join(messages(at, "warning"))
    for asked in ("model=gpt-9", "head=0", "q=-1", "window=0"):
        assert f"`{asked}`" in said, asked
    assert at.query_params["model"] == "zh" and at.query_params["window"] == "64"
    at = open_page(PAGE, lang="zh", model=run, text=typed, step="5", layer="9", temperature="hot", q="300")
    assert_clean(at)
    said = "\n".join(messages(at, "warning"))
    for asked in ("step=5", "layer=9", "temperature=hot", "q=300", "😀"):
        assert f"`{asked}`" in said, asked
    assert catalog("zh")["lm.cut"].format(n=len(typed) - 99, cap=99) in said
    assert at.query_params["layer"] == "2" and at.query_params["q"] == "0"
    assert at.text_area(key="lm.text").value == typed and at.query_params["step"] == "2"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_without_a_model_opens_the_shipped_run_of_its_language(lang):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    text = texts.first_text(lang)
    assert at.query_params["model"] == lang and at.text_area(key="lm.text").value == text
    end = lmlib.load(lang).predict(text, 10)
    np.testing.assert_allclose(_decode(chart(at, "lm.top")["data"][0]["x"]), end.probs, atol=1e-12)
