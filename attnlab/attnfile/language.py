"""attnlab's own language model (`attnlab.lm`, a Llama on our attention) as an attention file, checked as captured.

`from_language_model(lm, text)` runs one forward pass with its stages kept: each layer's `AttentionSteps` hold the
queries after RoPE (H heads) and the keys after RoPE repeated to H heads (query head h reads key/value head
h // (H / H_kv)). The file keeps the keys once per key/value head, states the rule (scale 1/√d, each layer's sliding
window from the model's config), and keeps queries and keys only when softmax(q·kᵀ·scale) under that rule gives back
the pass's own weights within `limits.TOL_CAPTURE_QK` (`qk_declined` says why otherwise), as `capture` does for a
transformers model. Only what the model object offers is used (`prepare`, `forward`, `cfg`, `name`, `step`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from attnlab.attnfile.file import AttentionFile, is_causal
from attnlab.attnfile.rule import layer_weights
from attnlab.limits import TOL_CAPTURE_QK


def _name(lm: Any) -> str:
    """The model's name for the file: attnlab's run (and its checkpoint) or the folder it came from."""
    step = getattr(lm, "step", None)
    return f"attnlab lm {lm.name}" + (f" (step {step})" if step is not None else "")


def from_language_model(lm: Any, text: str) -> AttentionFile:
    """`lm` (an attnlab.lm.LanguageModel) on `text`: causal self-attention, post-RoPE queries, grouped keys.

    The text is cut to the model's length as `lm.prepare` cuts it (its start kept); an empty text raises ValueError.
    """
    prep = lm.prepare(text)
    out = lm.forward(torch.tensor([prep.ids]), keep_steps=True)
    a = torch.stack([w[0] for w in out.attentions]).float().contiguous()  # (L, H, T, T)
    n_heads, n_kv_heads = lm.cfg.num_attention_heads, lm.cfg.num_key_value_heads
    group = n_heads // n_kv_heads
    queries = torch.stack([s.q[0] for s in out.steps]).float()  # (L, H, T, d), rotated
    repeated = torch.stack([s.k[0] for s in out.steps]).float()  # (L, H, T, d): key/value head h // group, repeated
    keys = repeated[:, ::group].contiguous()  # (L, H_kv, T, d)
    tokens, causal = tuple(prep.tokens), is_causal(a)
    windows = tuple(lm.cfg.windows) if causal and any(w is not None for w in lm.cfg.windows) else ()
    plain = AttentionFile(a, tokens, tokens, _name(lm), kind="self", causal=causal)
    if not torch.equal(keys.repeat_interleave(group, dim=1), repeated):
        return replace(plain, qk_declined="shapes")
    scale = (queries.size(-1) ** -0.5,) * a.size(0)
    file = AttentionFile(a, tokens, tokens, plain.model, queries, keys, "self", causal, scale, (), windows)
    for layer in range(a.size(0)):
        if not torch.allclose(layer_weights(file, layer), a[layer], atol=TOL_CAPTURE_QK, rtol=0):
            return replace(plain, qk_declined="mismatch")
    return file
