"""Where the prediction forms: the residual stream read through the unembedding, and taken apart (contract 19).

The residual stream of a Llama is a sum: the token's embedding, then what each layer's attention and MLP add. The
logit lens (nostalgebraist, 2020) reads the stream after the embedding and after each layer through the final
RMSNorm and the unembedding, as if the model stopped there; its last row is the model's output. The direct
attribution takes the last stream apart: with the final norm's scale frozen at its value for the whole stream,
    logit(token) = (g / rms(x)) · w_token · x = sum over parts p of (g / rms(x)) · w_token · p,
so each part's share is linear in it and the parts sum to the logit. The parts are "embed", "L.H" (head H of layer
L: its output through its slice of W_O, the columns of o_proj it owns) and "L.mlp", counted from 0 as the hook
points are; a model whose o_proj has a bias (Llama's `attention_bias`) has "L.bias" too, so the sum still holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnlab.limits import MAX_LM_LENS_BYTES


@dataclass(frozen=True)
class Trace:
    """One pass over one sequence, its residual stream taken apart (float32, as the model computed it)."""

    embed: torch.Tensor  # (T, D): the token embeddings
    heads: tuple[torch.Tensor, ...]  # per layer (H, T, d): each head's output, what o_proj reads
    attn: tuple[torch.Tensor, ...]  # per layer (T, D): what attention adds (o_proj of the heads)
    mlp: tuple[torch.Tensor, ...]  # per layer (T, D): what the MLP adds

    @property
    def n_tokens(self) -> int:
        return self.embed.size(0)

    def streams(self) -> torch.Tensor:
        """(L + 1, T, D): the stream after the embedding and after each layer, summed in the forward pass's order."""
        x, out = self.embed, [self.embed]
        for attn, mlp in zip(self.attn, self.mlp, strict=True):
            x = x + attn
            x = x + mlp
            out.append(x)
        return torch.stack(out)


def as_ids(ids) -> torch.Tensor:
    """A list of ints, or a (T,) or (1, T) LongTensor, as one (1, T) LongTensor; ValueError for anything else."""
    if not isinstance(ids, torch.Tensor):
        if not isinstance(ids, list | tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise ValueError("ids must be a list of ints or a (T,) or (1, T) LongTensor, as encode gives them")
        ids = torch.tensor(list(ids), dtype=torch.long)
    if ids.dtype != torch.long or ids.dim() not in (1, 2) or (ids.dim() == 2 and ids.size(0) != 1):
        raise ValueError("ids must be a list of ints or a (T,) or (1, T) LongTensor, as encode gives them")
    return ids.reshape(1, -1)


@torch.no_grad()
def trace(lm, ids) -> Trace:
    """The model's pass over ids, keeping what the embedding, each head and each MLP wrote into the stream."""
    parts: dict[str, torch.Tensor] = {}
    lm.forward(as_ids(ids), parts=parts)
    return from_parts(parts, lm.n_layers)


def from_parts(parts: dict[str, torch.Tensor], n_layers: int) -> Trace:
    """The Trace of a pass over one sequence whose `parts` were recorded (`LanguageModel.forward(..., parts=)`)."""
    layers = range(n_layers)
    return Trace(
        parts["embed"][0],
        tuple(parts[f"{i}.heads"][0] for i in layers),
        tuple(parts[f"{i}.attn"][0] for i in layers),
        tuple(parts[f"{i}.mlp"][0] for i in layers),
    )


def read_out(lm, x: torch.Tensor) -> torch.Tensor:
    """Streams (..., D) through the final RMSNorm and the unembedding: logits (..., V)."""
    return lm.model.unembed(lm.model.model.norm(x))


@torch.no_grad()
def lens(lm, ids) -> torch.Tensor:
    """(L + 1, T, V) float32: the logit lens after the embedding and after each layer; the last row is the output.

    ValueError when the whole tensor would pass MAX_LM_LENS_BYTES (a large vocabulary at a long text): read it a
    layer at a time from `trace(...).streams()` with `read_out` instead.
    """
    ids = as_ids(ids)
    size = 4 * (lm.n_layers + 1) * ids.size(1) * lm.cfg.vocab_size
    if size > MAX_LM_LENS_BYTES:
        raise ValueError(f"the lens of {ids.size(1)} tokens would take {size >> 20} MB (cap {MAX_LM_LENS_BYTES >> 20})")
    return read_out(lm, trace(lm, ids).streams())


def frozen_scale(lm, x: torch.Tensor) -> torch.Tensor:
    """(D,) float64: g / rms(x), the final RMSNorm's scale at one position's whole stream x (D,)."""
    norm = lm.model.model.norm
    x = x.double()
    return norm.weight.double() * torch.rsqrt(x.pow(2).mean() + norm.eps)


def unembedding(lm, token: int) -> torch.Tensor:
    """(D,) float64: the row of the unembedding that gives `token`'s logit."""
    model = lm.model
    w = model.model.embed_tokens.weight if model.cfg.tie_word_embeddings else model.lm_head.weight
    return w[token].double()


@torch.no_grad()
def parts_of(lm, tr: Trace, position: int, token: int) -> dict[str, float]:
    """Each part's direct contribution to `token`'s logit at `position`, from a trace already taken."""
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < tr.n_tokens:
        raise ValueError(f"position must be a whole number from 0 to {tr.n_tokens - 1}, got {position!r}")
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < lm.cfg.vocab_size:
        raise ValueError(f"token must be an id from 0 to {lm.cfg.vocab_size - 1}, got {token!r}")
    x = tr.streams()[-1, position]
    read = frozen_scale(lm, x) * unembedding(lm, token)  # (D,): what one unit along each dimension adds to the logit
    out = {"embed": float(tr.embed[position].double() @ read)}
    d = lm.cfg.head_dim
    for layer, heads in enumerate(tr.heads):
        o_proj = lm.model.model.layers[layer].self_attn.o_proj
        w_o = o_proj.weight.double()  # (D, H·d): nn.Linear keeps W_O transposed
        for h in range(heads.size(0)):
            through = heads[h, position].double() @ w_o[:, h * d : (h + 1) * d].T  # (D,): head h through its slice
            out[f"{layer}.{h}"] = float(through @ read)
        if o_proj.bias is not None:
            out[f"{layer}.bias"] = float(o_proj.bias.double() @ read)
        out[f"{layer}.mlp"] = float(tr.mlp[layer][position].double() @ read)
    return out


def attribution(lm, ids, position: int, token: int) -> dict[str, float]:
    """{"embed": ..., "0.0": ..., "0.mlp": ..., ...}: each part's direct contribution to `token`'s logit at
    `position`, the final norm's scale frozen, so the values sum to that logit."""
    return parts_of(lm, trace(lm, ids), position, token)
