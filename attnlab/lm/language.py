"""LanguageModel: a loaded Llama-family model with its vocabulary, run on text (contract 16).

Choices the contract leaves open: text past the model's length keeps its end for `predict` and `generate` (the
characters nearest the next one matter most) and its start for `prepare(..., keep="start")` (a page that draws the
attention of what was typed); either way `cut` says how many tokens went. A model's length is the least of its
`max_position_embeddings`, `MAX_LM_TOKENS` and the longest input whose attention weights fit
`MAX_LM_ATTENTION_BYTES`. `predict` shows every token the model may name, <bos> included; `generate` never
draws <bos> or <unk>. Both take temperature, top-k and top-p as `attnlab.lm.sampling` applies them (temperature 0:
the model's own distribution, as greedy decoding reads it). `lens` and `attribution` are `attnlab.lm.lens`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnlab.attention import AttentionSteps
from attnlab.limits import MAX_LM_ATTENTION_BYTES, MAX_LM_TOKENS
from attnlab.lm.cache import Cache
from attnlab.lm.checkpoint import save_folder
from attnlab.lm.generation import Generation, branches, generate
from attnlab.lm.lens import attribution as direct_parts
from attnlab.lm.lens import lens as logit_lens
from attnlab.lm.model import Hooks, Llama
from attnlab.lm.sampling import check_cuts, sampler
from attnlab.lm.vocab import CharVocab, Prepared, TokenizerVocab


@dataclass(frozen=True)
class Output:
    """One forward pass: logits (B, T, V); attentions, one (B, H, T, T_k) per layer; stages when asked."""

    logits: torch.Tensor
    attentions: list[torch.Tensor]
    steps: list[AttentionSteps] | None = None


@dataclass(frozen=True)
class Prediction:
    """The k likeliest next tokens after a text, likeliest first."""

    tokens: list[str]
    probs: list[float]  # after temperature, top-k and top-p, renormalised
    unknown: list[str]
    cut: int
    kept: int = 0  # how many tokens the cuts kept (all of the vocabulary without a cut)


def model_length(cfg) -> int:
    """The most tokens one pass takes: position table, the app's cap, and the attention weights' memory."""
    per_token2 = 4 * cfg.num_hidden_layers * cfg.num_attention_heads  # bytes per (query, key) pair, all heads
    fits = math.isqrt(MAX_LM_ATTENTION_BYTES // per_token2)
    return max(2, min(cfg.max_position_embeddings, MAX_LM_TOKENS, fits))


class LanguageModel:
    """A Llama-family causal LM on attnlab's attention; `steps` are a shipped run's checkpoints ([] otherwise)."""

    def __init__(
        self,
        model: Llama,
        vocab: CharVocab | TokenizerVocab,
        *,
        name: str = "",
        folder: Path | None = None,
        steps: list[int] | None = None,
        step: int | None = None,
    ):
        self.model, self.vocab, self.cfg = model.eval(), vocab, model.cfg
        self.name, self.folder = name, folder
        self.steps, self.step = list(steps or []), step
        self.max_len = model_length(self.cfg)

    @property
    def config(self):
        """transformers' keys: vocab_size, hidden_size, ..., rope_theta, max_position_embeddings, ... (read-only)."""
        return self.cfg.mapping

    @property
    def n_layers(self) -> int:
        return self.cfg.num_hidden_layers

    @property
    def n_heads(self) -> int:
        return self.cfg.num_attention_heads

    @property
    def n_kv_heads(self) -> int:
        return self.cfg.num_key_value_heads

    def encode(self, text: str) -> list[int]:
        """<bos>'s id, then the text's ids (no cut)."""
        return self.vocab.encode(text)

    def decode(self, ids) -> str:
        """The text of ids, <bos> dropped."""
        return self.vocab.decode([int(i) for i in ids])

    def unknown(self, text: str) -> list[str]:
        """The characters of `text` the vocabulary lacks, each once."""
        return self.vocab.unknown(text)

    def token(self, i: int) -> str:
        """One id's text."""
        return self.vocab.token(int(i))

    def prepare(self, text: str, room: int = 0, keep: str = "start") -> Prepared:
        """The ids of `text` cut to leave `room` tokens of the model's length free; keep its "start" or "end"."""
        if not isinstance(text, str) or not text:
            raise ValueError("the text is empty: type at least one character")
        if keep not in ("start", "end"):
            raise ValueError(f"keep must be 'start' or 'end', got {keep!r}")
        ids = self.encode(text)
        lead = 1 if self.vocab.bos_id is not None else 0
        limit = self.max_len - room
        if limit <= lead:
            raise ValueError(f"{room} tokens of room leave no place for text in {self.max_len}")
        body = ids[lead:]
        cut = max(0, len(body) - (limit - lead))
        if cut:
            body = body[cut:] if keep == "end" else body[: len(body) - cut]
            if isinstance(self.vocab, CharVocab):
                text = text[cut:] if keep == "end" else text[: len(text) - cut]
            else:
                text = self.vocab.decode(body)
        ids = ids[:lead] + body
        return Prepared(ids, [self.token(i) for i in ids], self.unknown(text), cut, text)

    def check_ids(self, ids: torch.Tensor, cache: Cache | None) -> None:
        """ids must be (B, T) whole numbers below the vocabulary size, T within the model's length."""
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
            raise ValueError("ids must be a (B, T) LongTensor")
        fed = 0 if cache is None else cache.fed
        if ids.size(1) < 1 or ids.size(1) + fed > self.max_len:
            raise ValueError(f"{ids.size(1) + fed} tokens: the model takes 1 to {self.max_len}")
        if bool((ids < 0).any()) or bool((ids >= self.cfg.vocab_size).any()):
            raise ValueError(f"ids must lie in 0..{self.cfg.vocab_size - 1}")

    @torch.no_grad()
    def forward(
        self, ids: torch.Tensor, hooks: Hooks | None = None, cache: Cache | None = None, *, keep_steps=False, parts=None
    ):
        """Logits (B, T, V) and every layer's weights (B, H, T, T_k); hooks `blocks.L.H.q|k|v|out` (contract 8);
        `parts`, a dict, takes what each piece writes into the residual stream (`attnlab.lm.lens.from_parts`)."""
        self.check_ids(ids, cache)
        logits, attentions, steps = self.model(ids, hooks, cache, keep_steps=keep_steps, parts=parts)
        return Output(logits, attentions, steps)

    __call__ = forward

    def token_id(self, piece: str) -> int:
        """The id of one token given as its text (a character, for a character model); ValueError when the
        vocabulary does not have it as one token."""
        ids = self.encode(piece)[1 if self.vocab.bos_id is not None else 0 :]
        if not isinstance(piece, str) or len(ids) != 1 or self.unknown(piece):
            raise ValueError(f"{piece!r} is not one token of this model's vocabulary")
        return ids[0]

    def predict(
        self, text: str, k: int = 10, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
    ) -> Prediction:
        """The k likeliest next tokens after `text` and their probabilities after temperature, top-k and top-p (only
        tokens the cuts keep are listed)."""
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not temperature >= 0:
            raise ValueError(f"temperature must be a number of 0 or more, got {temperature!r}")
        check_cuts(top_k, top_p)
        prep = self.prepare(text, keep="end")
        logits = self.forward(torch.tensor([prep.ids])).logits[0, -1]
        probs, keep = sampler(logits, temperature, top_k, top_p)
        n_kept = int(keep.sum())
        top = torch.topk(probs, max(1, min(int(k), n_kept)))
        tokens = [self.token(i) for i in top.indices.tolist()]
        return Prediction(tokens, top.values.tolist(), prep.unknown, prep.cut, n_kept)

    def generate(
        self,
        text: str,
        n: int,
        temperature: float = 0.0,
        seed: int = 0,
        window=None,
        sinks: int = 0,
        top_k: int | None = None,
        top_p: float | None = None,
    ) -> Generation:
        """`n` tokens after `text`, one cached step each (attnlab.lm.generation.generate)."""
        return generate(self, text, n, temperature, seed, window, sinks, top_k, top_p)

    def branches(
        self,
        text: str,
        n: int,
        temperatures: list[float],
        seed: int = 0,
        top_k: int | None = None,
        top_p: float | None = None,
    ) -> list[Generation]:
        """The same text continued by n tokens at each temperature, in one batch (attnlab.lm.generation.branches)."""
        return branches(self, text, n, temperatures, seed, top_k, top_p)

    def lens(self, ids) -> torch.Tensor:
        """(L + 1, T, V): the stream after the embedding and each layer through the final norm and unembedding."""
        return logit_lens(self, ids)

    def attribution(self, ids, position: int, token: int) -> dict[str, float]:
        """Each part's ("embed", "L.H", "L.mlp") direct contribution to `token`'s logit at `position`."""
        return direct_parts(self, ids, position, token)

    def new_cache(self, window: int | None = None, sinks: int = 0) -> Cache:
        """An empty key/value cache, whole or StreamingLLM's window with sinks."""
        return Cache(window, sinks)

    def save_pretrained(self, folder: str | Path) -> None:
        """config.json (LlamaForCausalLM for ours), model.safetensors in float32 and the vocabulary."""
        save_folder(self.model, self.vocab, Path(folder))

    def probs_of(self, ids: list[int]) -> np.ndarray:
        """(T, V) float64 next-token distributions along one sequence of ids (no cut)."""
        logits = self.forward(torch.tensor([ids])).logits[0]
        return torch.softmax(logits.double(), -1).numpy()

    def __repr__(self) -> str:
        c = self.cfg
        return (
            f"LanguageModel({self.name or self.folder!s}: {c.model_type}, {c.num_hidden_layers} layers, "
            f"{c.num_attention_heads}/{c.num_key_value_heads} heads, d={c.hidden_size}, vocab {c.vocab_size})"
        )
