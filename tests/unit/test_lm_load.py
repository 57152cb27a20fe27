"""attnlab.lm.load on folders transformers' own save_pretrained wrote (Llama, Qwen2, Mistral), and its refusals.

Each refusal must come before the model is allocated: the tests make allocating a model fail, so a check that came
too late would show up as that failure instead of the refusal.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from attnlab.limits import MAX_LM_BYTES, RTOL_FLOAT32, TOL_LM_LOGITS
from attnlab.lm import load
from attnlab.lm.vocab import BOS, UNK, CharVocab
from tests.conftest import REFERENCE_GROUP
from tests.near import assert_near

pytestmark = REFERENCE_GROUP
CHARS = list("abcdefghijklmnopqrstuvwxyz ,.")
TEXT = "a window slides, sinks stay."
SHAPE = dict(
    vocab_size=40,
    hidden_size=32,
    intermediate_size=40,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rope_theta=1000.0,
)
FAMILIES = {
    "llama": dict(bos_token_id=0, attention_bias=True),
    "qwen2": dict(bos_token_id=None, use_sliding_window=True, sliding_window=5, max_window_layers=1),
    "mistral": dict(bos_token_id=0, sliding_window=4),
}


def char_tokenizer(path) -> None:
    """A tokenizer.json that reads one character per token (BPE with no merges), <unk> for the rest."""
    from tokenizers import Tokenizer, decoders
    from tokenizers.models import BPE

    tok = Tokenizer(BPE({t: i for i, t in enumerate([BOS, UNK, *CHARS])}, [], unk_token=UNK))
    tok.decoder = decoders.Fuse()  # characters back together, no space between two tokens
    tok.save(str(path))


def transformers_model(family: str):
    """A random model of the family, weights N(0, 0.3) (norms near 1) so its heads attend sharply."""
    import transformers

    kinds = {"llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral"}
    config = getattr(transformers, f"{kinds[family]}Config")(**SHAPE, **FAMILIES[family])
    model = getattr(transformers, f"{kinds[family]}ForCausalLM")(config).eval()
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3 + (1.0 if p.dim() == 1 else 0.0))
    model.config._attn_implementation = "eager"
    return model


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """{family: (transformers model, folder)}: save_pretrained's own files plus a vocabulary."""
    out = {}
    for family in FAMILIES:
        model, folder = transformers_model(family), tmp_path_factory.mktemp(family)
        model.save_pretrained(folder)
        if family == "qwen2":
            char_tokenizer(folder / "tokenizer.json")
        else:
            CharVocab([BOS, UNK, *CHARS]).save(folder)
        out[family] = model, folder
    return out


@pytest.fixture
def no_allocation(monkeypatch):
    """Allocating a model raises: a refusal that came after allocation fails the test."""

    def refuse(cfg):
        raise AssertionError("the model was allocated before the refusal")

    monkeypatch.setattr("attnlab.lm.checkpoint.allocate", refuse)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_folder_transformers_saved_loads_with_the_same_logits(folders, family):
    model, folder = folders[family]
    lm = load(folder)
    ids = lm.encode(TEXT)
    assert (ids[0] == 0) == (family != "qwen2")  # Qwen2 has no <bos>
    x = torch.tensor([ids])
    with torch.no_grad():
        theirs = model(x, output_attentions=True)
    ours = lm.forward(x)
    assert_near(ours.logits, theirs.logits, (TOL_LM_LOGITS, RTOL_FLOAT32))
    for a, b in zip(ours.attentions, theirs.attentions, strict=True):
        assert_near(a, b)
    slides = [w is not None for w in lm.cfg.windows]
    assert slides == {"llama": [False, False], "qwen2": [False, True], "mistral": [True, True]}[family]


def test_a_qwen2_tokenizer_reports_what_it_cannot_read(folders):
    lm = load(folders["qwen2"][1])
    assert lm.unknown("abc€d") == ["€"] and lm.decode(lm.encode("abc d")) == "abc d"


def copy_folder(folders, tmp_path, family="llama"):
    folder = tmp_path / family
    shutil.copytree(folders[family][1], folder)
    return folder


def edit_config(folder, **changes):
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


def test_pickled_weights_are_refused_unopened(folders, tmp_path, no_allocation):
    folder = copy_folder(folders, tmp_path)
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    with pytest.raises(ValueError, match=r"^pytorch_model\.bin is pickled weights, which are never opened"):
        load(folder)


def test_a_config_past_the_memory_cap_is_refused(folders, tmp_path, no_allocation):
    folder = copy_folder(folders, tmp_path)
    edit_config(folder, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, vocab_size=128256)
    with pytest.raises(ValueError, match=f"more than the cap of {MAX_LM_BYTES // 2**20} MB"):
        load(folder)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"intermediate_size": 48}, r"mlp\.gate_proj\.weight has shape \[40, 32\], the config says \[48, 32\]"),
        ({"num_hidden_layers": 3}, r"lacks 'model\.layers\.2\."),
        ({"num_hidden_layers": 1}, r"holds 'model\.layers\.1\..*which the config has no place for"),
        ({"attention_bias": False}, r"holds 'model\.layers\.0\.self_attn\.[a-z]_proj\.bias'"),
        ({"num_key_value_heads": 3}, r"num_key_value_heads \(3\) must divide num_attention_heads \(4\)"),
        ({"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}}, "rope_type 'llama3' is not supported"),
        ({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}, "is not Llama, Qwen2 or Mistral"),
        ({"hidden_size": "32"}, "hidden_size must be a whole number"),
    ],
)
def test_a_config_that_does_not_match_the_weights_is_refused(folders, tmp_path, no_allocation, changes, message):
    folder = copy_folder(folders, tmp_path)
    edit_config(folder, **changes)
    with pytest.raises(ValueError, match=message) as err:
        load(folder)
    assert "\n" not in str(err.value)


def test_theta_is_read_from_rope_theta_as_well_as_rope_parameters(folders, tmp_path):
    folder = copy_folder(folders, tmp_path)
    edit_config(folder, rope_parameters=None, rope_theta=1000.0)
    assert load(folder).config["rope_theta"] == 1000.0


def test_folders_without_weights_or_vocabulary_and_names_off_the_list_are_refused(folders, tmp_path, no_allocation):
    folder = copy_folder(folders, tmp_path)
    with pytest.raises(ValueError, match="not among the models this server offers"):
        load(folder, allowed=["zh-other"])
    (folder / "chars.json").unlink()
    with pytest.raises(ValueError, match="neither tokenizer.json nor chars.json"):
        load(folder)
    (folder / "model.safetensors.index.json").write_text("{}")
    (folder / "model.safetensors").unlink()
    with pytest.raises(ValueError, match="sharded checkpoints"):
        load(folder)
    with pytest.raises(ValueError, match="no model folder"):
        load(tmp_path / "nowhere")


def test_a_truncated_weights_file_is_refused(folders, tmp_path, no_allocation):
    folder = copy_folder(folders, tmp_path)
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:-100])
    with pytest.raises(ValueError, match=r"model\.safetensors: tensor .* is refused \(st_offsets\)"):
        load(folder)


def test_a_hub_id_that_cannot_be_fetched_says_so(monkeypatch):
    """A host that does not reach the Hub (huggingface_hub raises as it does with no network)."""

    def unreachable(*args, **kwargs):
        raise ConnectionError("no route to huggingface.co")

    monkeypatch.setattr("huggingface_hub.hf_hub_download", unreachable)
    name = "attnlab-test/no-such-model"
    with pytest.raises(ValueError, match=r"^'attnlab-test/no-such-model' cannot be fetched .*\(ConnectionError\)$"):
        load(name, allowed=[name])
    with pytest.raises(ValueError, match="not among the models this server offers"):
        load(name, allowed=[])
