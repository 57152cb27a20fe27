"""One layer of a language model as the Playground's stage table reads it: every stage on the real weights.

`layer_steps(lm, ids, layer)` takes the stream the layer's heads read (after its RMSNorm, recorded through the
model's `q` hook point, so the model computes it) and runs `attnlab.multihead.multi_head_steps` on it with that
layer's own projections: W_Q, W_K, W_V and W_O read from q_proj, k_proj, v_proj and o_proj (nn.Linear keeps
W^T), the grouped key/value heads, RoPE in transformers' rotate-half layout with the model's θ, the causal mask
and a layer's sliding window where the config has one. So the stages are the Playground's, and a test holds them
to the model's own pass (`LanguageModel.forward(..., keep_steps=True)`). `contribution` is one head's share of
the layer's output: Z_h times the rows of W_O that head owns.
"""

from __future__ import annotations

import torch

from attnlab.lm import hook_name
from attnlab.lm.cache import allowed
from attnlab.multihead import MultiHeadSteps, MultiHeadWeights, multi_head_steps


def square(lm) -> bool:
    """The stage table needs H x d_k = d_model (W_Q and W_O square), as every shipped and most Llama models have."""
    cfg = lm.cfg
    return cfg.num_attention_heads * cfg.head_dim == cfg.hidden_size


@torch.no_grad()
def layer_inputs(lm, ids: tuple[int, ...]) -> list[torch.Tensor]:
    """Each layer's normed input (T, d_model), as the model's first query head of that layer reads it."""
    seen: list[torch.Tensor] = [torch.empty(0)] * lm.n_layers

    def keep(layer: int):
        def hook(x: torch.Tensor) -> torch.Tensor:
            seen[layer] = x[0].detach().clone()
            return x

        return hook

    hooks = {hook_name(layer, 0, "q"): keep(layer) for layer in range(lm.n_layers)}
    lm.forward(torch.tensor([list(ids)]), hooks=hooks)
    return seen


def weights_of(lm, layer: int) -> MultiHeadWeights:
    """The layer's projections in the seeds' orientation (X @ W), biases where the model has them (b_O 0 if only
    q, k and v have one, as in Qwen2)."""
    att = lm.model.model.layers[layer].self_attn
    w = {name: getattr(att, f"{name}_proj").weight.detach().T for name in "qkvo"}
    biases = {name: getattr(att, f"{name}_proj").bias for name in "qkvo"}
    if all(b is None for b in biases.values()):
        return MultiHeadWeights(w["q"], w["k"], w["v"], w["o"])
    b = {n: (v.detach() if v is not None else torch.zeros(w[n].size(1))) for n, v in biases.items()}
    return MultiHeadWeights(w["q"], w["k"], w["v"], w["o"], b["q"], b["k"], b["v"], b["o"])


@torch.no_grad()
def layer_steps(lm, ids: tuple[int, ...], layer: int, x: torch.Tensor | None = None) -> MultiHeadSteps:
    """Every stage of one layer on these ids (x: that layer's normed input, from `layer_inputs`, when known)."""
    cfg = lm.cfg
    x = layer_inputs(lm, ids)[layer] if x is None else x  # (T, D)
    t = x.size(0)
    slide = cfg.windows[layer]
    mask = None
    if slide is not None and t > slide:
        pos = torch.arange(t)
        mask = allowed(pos, pos, None, 0, slide)  # (T, T) bool: causal and inside the layer's window
    return multi_head_steps(
        x,
        x,
        weights_of(lm, layer),
        cfg.num_attention_heads,
        n_kv_heads=cfg.num_key_value_heads,
        rope="half",
        rope_base=cfg.rope_theta,
        is_causal=mask is None,
        attn_mask=mask,
    )


def contribution(steps: MultiHeadSteps, lm, layer: int, head: int) -> torch.Tensor:
    """(T, d_model): head `head`'s output Z_h through its own rows of W_O (the heads' sum, plus b_O, is the output)."""
    d_k = steps.d_k
    w_o = lm.model.model.layers[layer].self_attn.o_proj.weight.detach().T  # (H·d_k, D)
    return steps.heads.output[head] @ w_o[head * d_k : (head + 1) * d_k]
