"""The notebook recipe of the KV-cache page: its cache arithmetic, its chart, and the small MLA, plain and absorbed."""

from __future__ import annotations

from typing import Any

from attnlab.links import Replaced
from attnlab.notebook.cells import lit
from attnlab.notebook.recipe import Figure, Recipe


def kv_fix(v: dict[str, Any]) -> list[Replaced]:
    """The page's reading of a link's typed shape and MLA section (attnlab.links.kv.settle_kv)."""
    from attnlab.links.kv import settle_kv

    return [Replaced(*bad) for bad in settle_kv(v, v["link"])]


def shape_code(v: dict[str, Any]) -> str:
    """The shape and parameter count the page uses: a named model's, or the typed one."""
    if v["model"] != "custom":
        return f"shape = kvcache.MODELS[{lit(v['model'])}]\nparameters = kvcache.PARAMETERS[{lit(v['model'])}]\n"
    sizes = ", ".join(str(v[k]) for k in ("layers", "heads", "kv_heads", "head_dim", "latent", "rope_dim"))
    return f"shape = kvcache.ModelShape('custom', {sizes}, window={v['window'] or 0})\n" + (
        f"parameters = round({v['billions']!r} * 1e9)\n"
    )


def kv_setup(v: dict[str, Any]) -> str:
    """The page's numbers: the cache of the model, the five kinds on its width, the small MLA both ways."""
    return (
        f"""import torch

from attnlab import kvcache
from attnlab.figures import dim_labels, matrix_figure, palette
from attnlab.figures.kvcache import cache_figure, per_token_figure
from attnlab.mla import MLAWeights, cache_per_token, mla_steps
from attnlab.params import divisor_at_most

palette.use({lit(v["palette"])})
"""
        + shape_code(v)
        + f"""context, batch, b = {v["context"]}, {v["batch"]}, kvcache.BYTES[{lit(v["bytes"])}]
print("bytes per token:", kvcache.bytes_per_token(shape, b), "cache:", kvcache.cache_bytes(shape, context, batch, b))
print("tokens that fit beside the weights on an H100:", kvcache.tokens_that_fit(shape, parameters, batch, b))
kinds = kvcache.same_width(shape)
tokens = kvcache.curve_tokens(context, kinds["window"].window)
series = kvcache.curves(kinds, tokens, batch, b)
free = kvcache.H100_BYTES - kvcache.weight_bytes(parameters, b)

heads, dh, latent, rope, seed, T = {v["mla_heads"]}, {v["mla_dh"]}, {v["mla_latent"]}, {v["mla_rope"]}, {v["seed"]}, \
{v["mla_tokens"]}
h = {v["mla_head"]} - 1  # the head drawn
weights = MLAWeights.random(heads * dh, heads, latent, dh, rope, dh, seed=seed)
x = torch.randn(T, heads * dh, generator=torch.Generator().manual_seed(seed))
plain, absorbed = mla_steps(x, weights, heads), mla_steps(x, weights, heads, absorbed=True)
print("largest difference, weights:", float((absorbed.weights - plain.weights).abs().max()))
rows = [f"x{{i + 1}}" for i in range(T)]
gqa = divisor_at_most(heads, max(heads // 2, 1))
numbers = [cache_per_token(heads * dh, heads, kv) for kv in (heads, gqa, 1)] + [latent + rope]
"""
    )


NAMES = (
    "{'mha': 'MHA', 'gqa': f'GQA ({kinds[\"gqa\"].kv_heads} K/V heads)', 'mqa': 'MQA (1 K/V head)', 'mla': 'MLA', "
    "'window': 'window (GQA)', 'x': 'context (tokens)', 'y': 'cache', 'free': 'left on an H100 beside the weights'}"
)


def kv_figures(v: dict[str, Any]) -> tuple[Figure, ...]:
    """The chart, the cached latent, both forms' weights of the drawn head, and the cache per token."""
    return (
        Figure(
            "kv_curves",
            f"cache_figure(tokens, series, {NAMES}, free=free if free > 0 else None, context=context, "
            "title=f'Cache size against context: {shape.name}')",
        ),
        Figure("kv_latent", "matrix_figure(plain.latent.double().numpy(), rows, dim_labels(latent))"),
        Figure("kv_weights", "matrix_figure(plain.weights[h].double().numpy(), rows, rows, kind='prob')"),
        Figure("kv_absorbed", "matrix_figure(absorbed.weights[h].double().numpy(), rows, rows, kind='prob')"),
        Figure(
            "kv_bars",
            "per_token_figure(['MHA', f'GQA ({gqa} K/V heads)', 'MQA', 'MLA'], numbers, "
            "'Numbers cached per token and layer', 'numbers per token per layer')",
        ),
    )


KV: dict[str, Recipe] = {"kv-cache": Recipe("kv_cache", ("kv",), kv_setup, kv_figures, kv_fix)}
