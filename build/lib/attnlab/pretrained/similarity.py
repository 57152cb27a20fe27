"""Sentence similarity: two texts through the encoder, their embeddings and the cosine between them."""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F

from attnlab.pretrained.encoder import MAX_TOKENS, Encoder, EncoderRun


@dataclass(frozen=True)
class Similarity:
    """Both runs (tokens, embeddings) and the cosine of their embeddings, in [-1, 1]."""

    a: EncoderRun
    b: EncoderRun
    cosine: float


def similarity(encoder: Encoder, text_a: str, text_b: str, max_tokens: int = MAX_TOKENS) -> Similarity:
    """Embed both texts (each cut to max_tokens) and compare them as sentence-transformers' cos_sim does."""
    a, b = encoder.run(text_a, max_tokens), encoder.run(text_b, max_tokens)
    return Similarity(a, b, F.cosine_similarity(a.embedding, b.embedding, dim=0).item())
