"""Training reproduces bit for bit, records what it promises, and stops when asked."""

from __future__ import annotations

import json
import threading

import torch

from attnlab.limits import TRAINED_LIVE_MAX_STEPS
from attnlab.train import main
from attnlab.trained import load, training
from attnlab.trained.training import checkpoint_steps, train
from tests.conftest import LIVE_GROUP, LIVE_STEPS


def test_a_short_run_twice_gives_identical_weights(tmp_path):
    """Two optimiser steps (the second reads AdamW's moments from the first): every checkpoint and log byte-equal."""
    main(["induction-2l", "--out", str(tmp_path / "a"), "--steps", "2", "--seed", "3"])
    main(["induction-2l", "--out", str(tmp_path / "b"), "--steps", "2", "--seed", "3"])
    for s in checkpoint_steps(2):
        name = f"step{s:05d}.safetensors"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert json.loads((tmp_path / "a" / "log.json").read_text()) == json.loads(
        (tmp_path / "b" / "log.json").read_text()
    )
    other = tmp_path / "c"
    main(["induction-2l", "--out", str(other), "--steps", "2", "--seed", "4"])
    assert (other / "step00002.safetensors").read_bytes() != (tmp_path / "a" / "step00002.safetensors").read_bytes()


def test_a_written_run_loads_from_its_folder(tmp_path):
    main(["induction-1l", "--out", str(tmp_path), "--steps", "3"])
    d = load(tmp_path)
    assert d.steps == checkpoint_steps(3) and d.step == 3 and d.n_layers == 1


def test_the_callback_sees_every_step_and_cancel_stops_the_run():
    seen, stop = [], threading.Event()

    def on_step(step, losses):
        seen.append((step, losses["loss_repeat"]))
        if step == 5:
            stop.set()

    torch.set_num_threads(1)
    train("induction-1l", None, steps=50, callback=on_step, cancel=stop)
    assert [s for s, _ in seen] == [1, 2, 3, 4, 5]


def test_a_live_run_is_capped(monkeypatch):
    seen = []
    monkeypatch.setattr(training, "TRAINED_LIVE_MAX_STEPS", 3)
    training.train_live("induction-1l", 1000, lambda step, losses: seen.append(step))
    assert seen == [1, 2, 3] and TRAINED_LIVE_MAX_STEPS >= 100


@LIVE_GROUP
def test_the_live_variant_crosses_the_change_within_the_default_steps(default_live_runs):
    """The page's default live run (200 steps, seed 0) forms an induction head; the 1-layer control does not."""
    found = {}
    for name, seen in default_live_runs.items():
        scored = [(s, max(x["induction"])) for s, x in seen if "induction" in x]
        assert [s for s, _ in seen] == list(range(1, LIVE_STEPS + 1))
        assert [s for s, _ in scored] == list(range(10, 201, 10))
        found[name] = next((s for s, score in scored if score >= 0.5), None), seen[-1][1]["loss_repeat"]
    step, loss = found["induction-2l"]
    assert step is not None and step <= 180 and loss < 0.5
    assert found["induction-1l"][0] is None
