"""A language-model run end to end on the shipped excerpts: the folder it writes, read back, and its metrics' keys.

A few steps of a tiny recipe: what is checked is the layout (float16 checkpoints, log.json, metrics.json with
contract 16's keys), that `load` reads every checkpoint, and the data the recipes train on (periodic rows,
repeated spans). The shipped runs' own figures are tested in test_lm_runs.py.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from attnlab.lm import load
from attnlab.lm.corpus import Corpus, regular_poems, zh_docs
from attnlab.lm.recipes import LM_RECIPES
from attnlab.lm.training import Batches, LMRecipe, lr_at, saves, train_lm
from attnlab.train import lm_recipe
from tests.unit.test_lm_runs import KEYS

DATA = Path(__file__).resolve().parents[1] / "data" / "lm"
TINY = dict(layers=2, d_model=16, heads=2, kv_heads=1, ffn=24, context=128, batch=2, steps=6, warmup=2)


def excerpt() -> Corpus:
    """A corpus of the excerpts: every document to train on, the first three poems (regular ones) held out."""
    docs = [d for n in ("tang300", "song100", "chinese") for d in zh_docs(n, (DATA / n).read_text(encoding="utf-8"))]
    source = {"package": "excerpt", "version": "0", "licence": "public domain"}
    return Corpus("zh", docs, docs[:3], [source])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lmrun")
    r = LMRecipe("zh", **TINY, periodic_until=3, periodic_share=0.5, repeat_share=0.5)
    metrics = train_lm(r, excerpt(), folder, log_every=2, echo=lambda line: None)
    return r, folder, metrics


def test_a_run_writes_a_hugging_face_folder_with_float16_checkpoints_and_its_metrics(run):
    r, folder, metrics = run
    assert KEYS <= set(metrics) and json.loads((folder / "metrics.json").read_text(encoding="utf-8")) == metrics
    assert json.loads((folder / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
    log = json.loads((folder / "log.json").read_text())
    assert log["steps"] == saves(r) == [1, 2, 3, 6] and [c["step"] for c in log["checkpoints"]] == log["steps"]
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        assert {f.get_slice(k).get_dtype() for k in f.keys()} == {"F16"}
    assert sorted(p.name for p in (folder / "checkpoints").iterdir()) == [f"step{s:06d}.safetensors" for s in (1, 2, 3)]
    assert (
        metrics["heads"]["poems"] == 3 and len(metrics["heads"]["line_earlier"]) == len(metrics["heads"]["sink"]) == 2
    )
    poems = [body[:48] for body, _ in regular_poems(excerpt().held_out)]
    assert metrics["copy_passages"][:3] == poems and metrics["corpus"] == [
        {"package": "excerpt", "version": "0", "licence": "public domain"}
    ]
    for step in log["steps"]:
        assert load(folder, step=step).step == step


def test_the_metrics_are_measured_on_the_stored_weights(run):
    _, folder, metrics = run
    from attnlab.lm.metrics import copy_losses, random_strings

    lm = load(folder)
    first, second = copy_losses(lm, random_strings(len(lm.vocab)))
    # the same stored weights through the same pass in this process: equal but for the order of a float64 mean
    assert (first, second) == pytest.approx((metrics["copy_loss_first"], metrics["copy_loss_second"]), abs=1e-6)


def test_training_rows_hold_what_the_recipe_says():
    r = LMRecipe(
        "en", **{**TINY, "batch": 64, "context": 64}, periodic_until=1, periodic_share=1.0, periods=(4, 8), segment=16
    )
    stream = np.arange(1000, 3000)  # no value repeats, none below the vocabulary's 60
    x, y = Batches(r, stream, 60).next(0)
    assert x.shape == y.shape == (64, 64) and bool((x[:, 0] == 0).all()) and bool((x[:, 1:] == y[:, :-1]).all())
    for row in y.numpy():
        for seg in row.reshape(4, 16):
            period = next(p for p in range(4, 9) if (seg[p:] == seg[:-p]).all())
            assert len(set(seg[:period])) == period
    spans = dataclasses.replace(r, periodic_until=0, repeat_share=1.0)
    for row in Batches(spans, stream, 60).next(5)[1].numpy():
        span = row[row < 60]  # the random span, written twice, is all that comes from the vocabulary
        n = len(span) // 2
        assert 8 <= n <= 48 and (span[:n] == span[n:]).all()
    assert lr_at(r, 0) == pytest.approx(r.lr / 2) and lr_at(r, r.steps) == pytest.approx(r.lr * r.min_lr)


def test_the_command_line_changes_one_recipe_field_at_a_time():
    r = lm_recipe("lm-en", 10, 3, ["periods=4,16", "repeat_share=0.25", "vocab_cap=50"])
    assert (r.steps, r.seed, r.periods, r.repeat_share, r.vocab_cap) == (10, 3, (4, 16), 0.25, 50)
    assert lm_recipe("lm-zh", None, None, []) == LM_RECIPES["lm-zh"]
    with pytest.raises(SystemExit, match="no recipe field 'nope'"):
        lm_recipe("lm-en", None, None, ["nope=1"])
