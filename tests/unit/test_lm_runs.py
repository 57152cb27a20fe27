"""The shipped language models: their run folders, their metrics recomputed, and what a wheel carries.

metrics.json must be what the model does: the copy measures are computed again here on the shipped weights, from
the passages and the random strings' seed it records, and must agree within a tolerance (not bit for bit: CPUs and
BLAS builds round differently).
"""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
import torch

from attnlab.lm import SHIPPED, load, run_dir, run_metrics
from attnlab.lm.metrics import copy_losses, random_strings

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "held_out_loss",
    "unigram_loss",
    "bigram_loss",
    "copy_loss_first",
    "copy_loss_second",
    "copy_passage_first",
    "copy_passage_second",
    "corpus",
    "train_seconds",
    "device",
}
TOL_RECOMPUTED = 1e-3  # nats, on losses of 1 to 8: float32 sums in another order, on the machine that trained it
MAX_RUN_BYTES = 8 * 10**6


@pytest.fixture(scope="module", params=SHIPPED)
def shipped(request):
    return request.param, load(request.param), run_metrics(request.param)


def test_a_shipped_run_has_contract_16s_metrics_and_beats_the_bigram(shipped):
    name, lm, m = shipped
    assert KEYS <= set(m)
    assert m["held_out_loss"] < m["bigram_loss"] < m["unigram_loss"]
    assert all(s["package"] and s["version"] and s["licence"] for s in m["corpus"])
    layers, heads = lm.n_layers, lm.n_heads
    for share in ("sink", "previous", *(["line_earlier"] if name == "zh" else [])):
        values = torch.tensor(m["heads"][share])
        assert values.shape == (layers, heads) and bool(((values >= 0) & (values <= 1)).all())


def test_the_copy_measures_are_what_the_shipped_model_does(shipped):
    _, lm, m = shipped
    first, second = copy_losses(
        lm, random_strings(len(lm.vocab), m["copy_random"]["seed"], m["copy_random"]["strings"])
    )
    assert first == pytest.approx(m["copy_loss_first"], abs=TOL_RECOMPUTED)
    assert second == pytest.approx(m["copy_loss_second"], abs=TOL_RECOMPUTED)
    passages = m["copy_passages"]
    assert passages and all(len(p) == 48 and not lm.unknown(p) for p in passages)
    first, second = copy_losses(lm, [lm.encode(p)[1:] for p in passages])
    assert first == pytest.approx(m["copy_passage_first"], abs=TOL_RECOMPUTED)
    assert second == pytest.approx(m["copy_passage_second"], abs=TOL_RECOMPUTED)


def test_a_shipped_run_keeps_six_checkpoints_within_8_mb(shipped):
    name, lm, _ = shipped
    folder = run_dir(name)
    assert len(lm.steps) >= 6 and lm.step == lm.steps[-1]
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) <= MAX_RUN_BYTES
    early = load(name, step=lm.steps[0])
    assert early.step == lm.steps[0] and early.predict(lm.prepare("ab" if name == "en" else "明月").text).tokens
    with pytest.raises(ValueError, match="is not a checkpoint"):
        load(name, step=lm.steps[0] + 1)


def test_the_wheel_carries_the_shipped_runs():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["attnlab"]
    files = [p.relative_to(ROOT / "attnlab").as_posix() for p in (ROOT / "attnlab" / "lm" / "runs").rglob("*")]
    files = [f for f in files if "." in Path(f).name]
    assert files and all(any(fnmatch(f, pat) for pat in patterns) for f in files), files
