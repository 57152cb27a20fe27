"""Attention captured from a live model: any transformers model (duck-typed, never imported) or our MiniLM.

`capture` asks the model for `output_attentions=True` in eval mode, under no_grad, and records every layer's
queries and keys as its attention used them. Where the model computes attention through transformers' attention
interface (>= 4.48: every family in transformers 5), `attnlab.attnfile.interface` records them there: after RoPE
(partial rotary too), biases and q/k norms, one key head per key/value head, with the rule each layer applied
(scale, Gemma 2's soft-cap, the mask it received). Elsewhere the model runs with "eager" attention (SDPA kernels
return no weights) and forward hooks on the projection modules found by their usual names (`query`/`key` in
BERT-like models, `q_proj`/`k_proj`, GPT-2's fused `c_attn`, T5's `q`/`k`) record them before any rotation.
Either way a kind's queries and keys are kept only when they give back the model's own attentions within
`limits.TOL_CAPTURE_QK` (`TOL_CAPTURE_QK_HALF` for a half-precision model): softmax(cap(q·kᵀ·scale) + mask) under
the mask each layer received, a mask that must be, cell by cell, the one the file's stated rule describes (full,
causal or a causal window). Otherwise the file has none, and its `qk_declined` says why (`attnfile.DECLINED`).
The model's mode and attention implementation are restored.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import torch

from attnlab.attnfile.file import AttentionFile, is_causal
from attnlab.attnfile.interface import qk_fields, recording
from attnlab.limits import MAX_ATTN_MODEL_CHARS, TOL_CAPTURE_QK, TOL_CAPTURE_QK_HALF

Q_NAMES = ("query", "q_proj", "q")
K_NAMES = ("key", "k_proj", "k")
FUSED_NAMES = ("c_attn",)  # GPT-2: one projection gives q, k and v side by side
CROSS_PARTS = ("encoder_attn", "EncDecAttention", "crossattention", "cross_attn")


def _kind_of(path: str, encoder_decoder: bool) -> str:
    """Which kind of attention a projection module belongs to, from its dotted path."""
    parts = path.split(".")
    if not encoder_decoder:
        return "self"
    if any(part in CROSS_PARTS for part in parts):
        return "cross"
    return "decoder" if "decoder" in parts else "encoder"


@contextmanager
def _recording(model: Any, encoder_decoder: bool):
    """Forward hooks on every q/k projection, yielding {kind: {"q": [...], "k": [...]}} filled by the call."""
    seen: dict[str, dict[str, list[torch.Tensor]]] = {}
    handles = []

    def hook(kind: str, role: str) -> Callable[..., None]:
        def record(_module: Any, _inputs: Any, output: Any) -> None:
            if isinstance(output, torch.Tensor):
                seen.setdefault(kind, {"q": [], "k": []})
                if role == "qkv":
                    q, k, _ = output.detach().float().chunk(3, dim=-1)
                    seen[kind]["q"].append(q)
                    seen[kind]["k"].append(k)
                else:
                    seen[kind][role].append(output.detach().float())

        return record

    named = getattr(model, "named_modules", None)
    for path, module in named() if callable(named) else ():
        leaf = path.rsplit(".", 1)[-1]
        role = "q" if leaf in Q_NAMES else "k" if leaf in K_NAMES else "qkv" if leaf in FUSED_NAMES else None
        if role is not None and hasattr(module, "register_forward_hook"):
            handles.append(module.register_forward_hook(hook(_kind_of(path, encoder_decoder), role)))
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def _heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(1, T, D) projections as (H, T, d)."""
    t, width = x.shape[-2:]
    return x.reshape(t, n_heads, width // n_heads).transpose(0, 1)


def _qk(seen: dict[str, list[torch.Tensor]] | None, a: torch.Tensor, causal: bool):
    """(queries, keys) as (L, H, T, d) when the hooks saw one q and one k per layer that give back `a`; else Nones."""
    n_layers, n_heads, t_q, t_k = a.shape
    if not seen or len(seen["q"]) != n_layers or len(seen["k"]) != n_layers:
        return None, None
    if any(q.shape[-1] % n_heads or q.shape[-1] != k.shape[-1] for q, k in zip(seen["q"], seen["k"], strict=True)):
        return None, None
    if any(q.shape[-2] != t_q or k.shape[-2] != t_k for q, k in zip(seen["q"], seen["k"], strict=True)):
        return None, None
    queries = torch.stack([_heads(q, n_heads) for q in seen["q"]])  # (L, H, T_q, d)
    keys = torch.stack([_heads(k, n_heads) for k in seen["k"]])  # (L, H, T_k, d)
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.size(-1))  # (L, H, T_q, T_k)
    if causal:
        scores = scores.masked_fill(torch.ones(t_q, t_k, dtype=torch.bool).triu(1), float("-inf"))
    if not torch.allclose(scores.softmax(dim=-1), a, atol=TOL_CAPTURE_QK, rtol=0):
        return None, None
    return queries.contiguous(), keys.contiguous()


def _stack(layers: Any) -> torch.Tensor | None:
    """A model's per-layer attentions, each (1, H, T_q, T_k), as one float32 (L, H, T_q, T_k); None when absent."""
    if not layers or any(not isinstance(x, torch.Tensor) for x in layers):
        return None
    return torch.stack([x[0].detach().float() for x in layers]).contiguous()


def _tokens(tokenizer: Any, ids: torch.Tensor) -> tuple[str, ...]:
    """The tokenizer's own token strings for one row of ids."""
    return tuple(str(tok) for tok in tokenizer.convert_ids_to_tokens(ids[0].tolist()))


@contextmanager
def _eager(model: Any):
    """Eager attention for one call where the model can switch (SDPA returns no weights), its choice restored."""
    before = getattr(getattr(model, "config", None), "_attn_implementation", None)
    switch = callable(getattr(model, "set_attn_implementation", None)) and before not in (None, "eager")
    if switch:
        model.set_attn_implementation("eager")
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation(before)


@contextmanager
def _running(model: Any, encoder_decoder: bool):
    """Eval mode and no_grad, recording: yields ("interface", calls) where the model has one, else ("hooks", seen)."""
    training = getattr(model, "training", False)
    model.eval()
    try:
        with torch.no_grad(), recording(model) as calls:
            if calls is not None:
                yield "interface", calls
            else:
                with _eager(model), _recording(model, encoder_decoder) as seen:
                    yield "hooks", seen
    finally:
        model.train(training)


def _paths(model: Any) -> dict[int, str]:
    """id() of every submodule -> its dotted path (which kind of attention a recorded call belongs to)."""
    named = getattr(model, "named_modules", None)
    return {id(module): path for path, module in named()} if callable(named) else {}


def _qk_of(how: str, record: Any, model: Any, kind: str, layers: Any, a: torch.Tensor, causal: bool) -> dict | str:
    """One kind's queries, keys and rule as the file holds them, or why it holds none (one of DECLINED)."""
    if how == "hooks":
        queries, keys = _qk(record.get(kind), a, causal)
        return "hooks" if queries is None else {"queries": queries, "keys": keys}
    paths = _paths(model)
    encoder_decoder = bool(getattr(getattr(model, "config", None), "is_encoder_decoder", False))
    calls = [c for c in record if _kind_of(paths.get(c.module, ""), encoder_decoder) == kind]
    return qk_fields(calls, tuple(layers), a, causal, (TOL_CAPTURE_QK, TOL_CAPTURE_QK_HALF))


def _encode_target(tokenizer: Any, target: str) -> dict[str, torch.Tensor]:
    """The target's ids, with the tokenizer's target vocabulary where it has one (Marian, T5 via text_target)."""
    try:
        return tokenizer(text_target=target, return_tensors="pt")
    except TypeError:  # a tokenizer with no notion of a target side
        return tokenizer(target, return_tensors="pt")


def capture(model: Any, tokenizer: Any, text: str, target: str | None = None) -> dict[str, AttentionFile]:
    """Every head's attention of a transformers model on `text` (and `target` for an encoder-decoder), by kind.

    Returns {"self": ...} for an encoder-only or decoder-only model, or {"encoder", "decoder", "cross"}.
    Raises ValueError when an encoder-decoder gets no target or the model returns no attentions.
    """
    encoder_decoder = bool(getattr(getattr(model, "config", None), "is_encoder_decoder", False))
    if encoder_decoder and target is None:
        raise ValueError("an encoder-decoder model needs a target text as well")
    name = str(getattr(getattr(model, "config", None), "name_or_path", "") or type(model).__name__)
    name = name[-MAX_ATTN_MODEL_CHARS:]  # a local checkpoint path can be long; its end names the model
    source = tokenizer(text, return_tensors="pt")
    inputs = {"input_ids": source["input_ids"]}
    if "attention_mask" in source:
        inputs["attention_mask"] = source["attention_mask"]
    tokens = _tokens(tokenizer, source["input_ids"])
    if encoder_decoder:
        inputs["decoder_input_ids"] = _encode_target(tokenizer, target)["input_ids"]
        tokens_target = _tokens(tokenizer, inputs["decoder_input_ids"])
    with _running(model, encoder_decoder) as (how, record):
        outputs = model(**inputs, output_attentions=True, return_dict=True)
    if not encoder_decoder:
        parts = {"self": (getattr(outputs, "attentions", None), tokens, tokens)}
    else:
        parts = {
            "encoder": (getattr(outputs, "encoder_attentions", None), tokens, tokens),
            "decoder": (getattr(outputs, "decoder_attentions", None), tokens_target, tokens_target),
            "cross": (getattr(outputs, "cross_attentions", None), tokens_target, tokens),
        }
    files = {}
    for kind, (layers, tokens_q, tokens_k) in parts.items():
        a = _stack(layers)
        if a is None:
            raise ValueError(f"the model returned no {kind} attentions (is output_attentions supported?)")
        causal = kind != "cross" and is_causal(a)
        got = _qk_of(how, record, model, kind, layers, a, causal)
        qk = {} if isinstance(got, str) else got
        declined = got if isinstance(got, str) else ""
        files[kind] = AttentionFile(a, tokens_q, tokens_k, name, kind=kind, causal=causal, qk_declined=declined, **qk)
    return files


EAGER_HINT = 'load the model with attn_implementation="eager" and call it with output_attentions=True'


def from_attentions(
    attention: Any, tokens: Any, tokens_k: Any = None, *, model: str = "", kind: str | None = None
) -> AttentionFile:
    """bertviz's input as a file: `attention` a tuple over layers of (batch, H, T_q, T_k), batch item 0 kept.

    That is what a transformers model returns as `outputs.attentions` (or `cross_attentions`, with the source's
    tokens as `tokens_k`). Raises ValueError naming what does not fit: not a sequence of layers, a layer that is
    not 4-D, layers of different shapes, token counts that are not T_q and T_k, tokens that are not strings.
    """
    if attention is None or isinstance(attention, (str, bytes)) or not hasattr(attention, "__len__"):
        raise ValueError(f"attention must be a tuple over layers (outputs.attentions): {EAGER_HINT}")
    if len(attention) == 0 or any(layer is None for layer in attention):
        raise ValueError(f"attention holds no layers: {EAGER_HINT}")
    layers = [torch.as_tensor(layer).detach() for layer in attention]
    shapes = {tuple(layer.shape) for layer in layers}
    if any(layer.dim() != 4 for layer in layers):
        bad = next(tuple(layer.shape) for layer in layers if layer.dim() != 4)
        raise ValueError(f"each layer must be (batch, heads, T_q, T_k), as in outputs.attentions; got {bad}")
    if len(shapes) != 1:
        raise ValueError(f"every layer must have the same shape; got {sorted(shapes)}")
    (shape,) = shapes
    if 0 in shape:
        raise ValueError(f"a layer of shape {shape} holds nothing")
    tokens_q = _token_list("tokens", tokens, shape[2])
    tokens_k = tokens_q if tokens_k is None else _token_list("tokens_k", tokens_k, shape[3])
    a = torch.stack([layer[0].to("cpu", torch.float32) for layer in layers]).contiguous()  # (L, H, T_q, T_k)
    kind = kind or ("self" if tokens_k is tokens_q else "cross")
    return AttentionFile(a, tokens_q, tokens_k, model, kind=kind, causal=kind != "cross" and is_causal(a))


def _token_list(name: str, tokens: Any, n: int) -> tuple[str, ...]:
    """Tokens as a tuple of n strings; ValueError naming `name` otherwise."""
    if isinstance(tokens, str) or not all(isinstance(tok, str) for tok in tokens):
        raise ValueError(f"{name} must be a list of token strings (tokenizer.convert_ids_to_tokens)")
    if len(tokens) != n:
        raise ValueError(f"{len(tokens)} {name} for attention over {n} positions")
    return tuple(tokens)


def from_encoder(encoder: Any, text: str, max_tokens: int = 128) -> AttentionFile:
    """attnlab's MiniLM (pretrained.Encoder) on `text`, through our own attention, with every head's q and k.

    Queries and keys are hidden[layer] through each head's columns of W_Q and W_K (+ biases), as
    Encoder.head_steps computes them: (L, H, T, d_k) = (6, 12, T, 32).
    """
    run = encoder.run(text, max_tokens)
    queries, keys = [], []
    for layer, weights in enumerate(encoder.weights.layers):
        x = run.hidden[layer]  # (T, D)
        w = weights.attention
        queries.append(_heads(x @ w.w_q + w.b_q, encoder.n_heads))  # (H, T, d_k)
        keys.append(_heads(x @ w.w_k + w.b_k, encoder.n_heads))
    return AttentionFile(
        run.attentions.float(), run.tokens, run.tokens, encoder.name, torch.stack(queries), torch.stack(keys)
    )


def from_decoder(decoder: Any, symbols: list[str]) -> AttentionFile:
    """A trained decoder (trained.Decoder) on `symbols`: causal self-attention with every head's q and k.

    The tokens are the start marker then the symbols; queries and keys are the per-head (L, H, T, d_k)
    projections its forward pass computes, so softmax(q kᵀ / √d_k) under the causal mask is the file's weights.
    """
    _, steps, ids = decoder.forward(symbols)
    tokens = [decoder.start, *(decoder.vocab[i] for i in ids[1:].tolist())]
    stacked = {name: torch.stack([getattr(s, name)[0] for s in steps]).float() for name in ("weights", "q", "k")}
    name = f"attnlab {decoder.folder.name} (step {decoder.step})"
    return AttentionFile(
        stacked["weights"], tuple(tokens), tuple(tokens), name, stacked["q"], stacked["k"], "self", causal=True
    )
