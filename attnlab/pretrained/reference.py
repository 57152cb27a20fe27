"""The on-screen check of the real model: transformers' BertModel and sentence-transformers on the same text.

Importing those libraries takes seconds and a few hundred MB, so nothing imports this module until a
user asks for the check; the two reference models are then loaded once per process, offline, from the
same package folder our own loader reads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from attnlab.limits import RTOL_FLOAT32, TOL_FLOAT32, TOL_MINILM_COSINE
from attnlab.pretrained.encoder import EncoderRun
from attnlab.pretrained.package import model_dir
from attnlab.tolerance import bound


@dataclass(frozen=True)
class References:
    """BertModel (eager attention, so it returns its maps), its tokenizer, and SentenceTransformer."""

    tokenizer: Any
    bert: Any
    sbert: Any


@dataclass(frozen=True)
class ModelCheck:
    """Our run against the references: tokens equal, max |Δ| of the maps and the last hidden state, the cosine.

    Each bound is float32's floor plus its relative part of the largest value compared (`attnlab.tolerance`): the
    weights are at most 1, the hidden state reaches 10 and more, and its last bits follow the CPU's summation order.
    """

    tokens_match: bool
    attention_err: float
    hidden_err: float
    cosine: float
    attention_bound: float = TOL_FLOAT32
    hidden_bound: float = TOL_FLOAT32
    min_cosine: float = TOL_MINILM_COSINE

    @property
    def passed(self) -> bool:
        """Every figure within its bound."""
        return (
            self.tokens_match
            and self.attention_err <= self.attention_bound
            and self.hidden_err <= self.hidden_bound
            and self.cosine >= self.min_cosine
        )


def load_references(max_tokens: int) -> References:
    """Both reference models from the package folder with every hub access switched off."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, BertModel

    folder = str(model_dir())
    bert = BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    sbert = SentenceTransformer(folder, device="cpu")
    sbert.max_seq_length = max_tokens
    return References(AutoTokenizer.from_pretrained(folder), bert, sbert)


def check_run(refs: References, run: EncoderRun, max_tokens: int) -> ModelCheck:
    """Run the references on the run's text and compare every attention map, the last layer and the embedding."""
    batch = refs.tokenizer(run.text, return_tensors="pt", truncation=True, max_length=max_tokens)
    with torch.no_grad():
        out = refs.bert(**batch, output_attentions=True, output_hidden_states=True)
    tokens = tuple(refs.tokenizer.convert_ids_to_tokens(batch["input_ids"][0]))
    expected = refs.sbert.encode(run.text, convert_to_tensor=True).cpu()
    cosine = F.cosine_similarity(run.embedding, expected, dim=0).item()
    if tokens != run.tokens:
        return ModelCheck(False, float("inf"), float("inf"), cosine)
    attentions = torch.stack(out.attentions)[:, 0]  # (L, H, T, T)
    last = out.hidden_states[-1][0]  # (T, D)
    return ModelCheck(
        True,
        (attentions - run.attentions).abs().max().item(),
        (last - run.hidden[-1]).abs().max().item(),
        cosine,
        bound(attentions, TOL_FLOAT32, RTOL_FLOAT32),
        bound(last, TOL_FLOAT32, RTOL_FLOAT32),
    )
