"""What the key/value cache of real models costs: their shapes, read from their configs, and its arithmetic.

Contract 14. Every layer caches, for every token, one key and one value per key/value head:
2 * layers * kv_heads * head_dim numbers. Multi-head latent attention (DeepSeek-V2/V3) caches instead one latent of
`latent` numbers and the one rotated key of `rope_dim` numbers that all heads share: layers * (latent + rope_dim).
A sliding window caps the tokens a sequence keeps. Each shape names the Hugging Face config file its numbers were
read from (`source`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BYTES = {"fp32": 4, "bf16": 2, "fp8": 1, "int4": 0.5}  # bytes per cached number (or weight) by format
H100_BYTES = 80 * 10**9  # an H100's 80 GB as sold (10^9 bytes); the driver and activations take some of it too


@dataclass(frozen=True)
class ModelShape:
    """The attention shape that decides a model's cache: layers, heads, key/value heads, head width; MLA; a window.

    `latent > 0` means multi-head latent attention, which caches `latent + rope_dim` numbers per token per layer
    (its `kv_heads` and `head_dim` are then what the config lists, never used for the cache); `window > 0` caps the
    tokens one sequence keeps cached.
    """

    name: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    latent: int = 0
    rope_dim: int = 0
    window: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        for field in ("layers", "heads", "kv_heads", "head_dim"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{field} must be a whole number of at least 1, got {value!r}")
        for field in ("latent", "rope_dim", "window"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{field} must be a whole number of 0 or more, got {value!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide heads ({self.heads})")
        if self.rope_dim and not self.latent:
            raise ValueError(f"rope_dim ({self.rope_dim}) is MLA's shared rotated key: it needs latent > 0")

    @property
    def mla(self) -> bool:
        """True for multi-head latent attention (the cache holds a latent, not keys and values)."""
        return self.latent > 0

    @property
    def numbers_per_layer(self) -> int:
        """Numbers one token adds to one layer's cache."""
        return self.latent + self.rope_dim if self.mla else 2 * self.kv_heads * self.head_dim


# Read from each model's config.json on the Hugging Face Hub (the file named in `source`). GPT-2's from the file
# itself; the others from copies of it whose `_name_or_path` names the original repository (the originals are gated
# or were not in the library), with the same values as the models' papers and cards.
MODELS: dict[str, ModelShape] = {
    "gpt2": ModelShape("GPT-2 small", 12, 12, 12, 64, source="openai-community/gpt2/config.json"),
    "llama-3-8b": ModelShape("Llama-3-8B", 32, 32, 8, 128, source="meta-llama/Meta-Llama-3-8B/config.json"),
    "llama-3-70b": ModelShape("Llama-3-70B", 80, 64, 8, 128, source="meta-llama/Meta-Llama-3-70B/config.json"),
    "mistral-7b": ModelShape("Mistral-7B", 32, 32, 8, 128, window=4096, source="mistralai/Mistral-7B-v0.1/config.json"),
    "qwen2.5-7b": ModelShape("Qwen2.5-7B", 28, 28, 4, 128, source="Qwen/Qwen2.5-7B/config.json"),
    # num_key_value_heads 128 and qk_nope_head_dim = v_head_dim = 128 are what the config lists; the cache is
    # kv_lora_rank 512 + qk_rope_head_dim 64 per layer, which `numbers_per_layer` uses.
    "deepseek-v3": ModelShape(
        "DeepSeek-V3", 61, 128, 128, 128, latent=512, rope_dim=64, source="deepseek-ai/DeepSeek-V3/config.json"
    ),
}

# Parameters of each model (all of them, every expert included: they all sit in memory), counted from the same
# configs: embeddings (untied but GPT-2's), attention, MLP or experts, norms. tests/unit/test_kvcache.py recounts
# them from the config fields. They match the published sizes: 124M, 8.03B, 70.6B, 7.24B, 7.62B and 671B.
PARAMETERS: dict[str, int] = {
    "gpt2": 124_439_808,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "mistral-7b": 7_241_732_096,
    "qwen2.5-7b": 7_615_616_512,
    "deepseek-v3": 671_026_419_200,
}


def _check_bytes(bytes_per_number: float) -> float:
    """A positive, finite number of bytes per number (0.5 for int4)."""
    if not isinstance(bytes_per_number, (int, float)) or not math.isfinite(bytes_per_number) or bytes_per_number <= 0:
        raise ValueError(f"bytes_per_number must be a finite number above 0, got {bytes_per_number!r}")
    return bytes_per_number


def bytes_per_token(shape: ModelShape, bytes_per_number: float = 2) -> float:
    """Bytes one token adds to the cache of all layers: 2 * layers * kv_heads * head_dim * bytes, or for MLA
    layers * (latent + rope_dim) * bytes (never the listed key/value heads)."""
    return shape.layers * shape.numbers_per_layer * _check_bytes(bytes_per_number)


def cached_tokens(shape: ModelShape, tokens: int) -> int:
    """Tokens one sequence of `tokens` keeps cached: all of them, or the window's worth."""
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise ValueError(f"tokens must be a whole number of 0 or more, got {tokens!r}")
    return min(tokens, shape.window) if shape.window else tokens


def cache_bytes(shape: ModelShape, tokens: int, batch: int = 1, bytes_per_number: float = 2) -> float:
    """The whole cache: bytes per token x batch x the tokens each sequence keeps (capped at the window)."""
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ValueError(f"batch must be a whole number of at least 1, got {batch!r}")
    return bytes_per_token(shape, bytes_per_number) * batch * cached_tokens(shape, tokens)


def naive_bytes_per_token(shape: ModelShape, bytes_per_number: float = 2) -> float:
    """The usual formula 2 * layers * kv_heads * head_dim * bytes on whatever the config lists: right for MHA, GQA
    and MQA, badly wrong for MLA (DeepSeek-V3's 128 listed key/value heads are never cached)."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * _check_bytes(bytes_per_number)


def weight_bytes(parameters: int, bytes_per_number: float = 2) -> float:
    """Bytes the weights take at the same number format as the cache."""
    return parameters * _check_bytes(bytes_per_number)


def tokens_that_fit(
    shape: ModelShape, parameters: int, batch: int = 1, bytes_per_number: float = 2, memory: float = H100_BYTES
) -> int | None:
    """Context tokens per sequence whose cache fits in `memory` beside the weights (0: the weights alone do not fit;
    None: any length fits, since a window caps the cache and its full window fits)."""
    free = memory - weight_bytes(parameters, bytes_per_number)
    per_step = bytes_per_token(shape, bytes_per_number) * batch  # every sequence of the batch adds one token
    if free < per_step:
        return 0
    fit = int(free // per_step)
    return None if shape.window and fit >= shape.window else fit


def same_width(shape: ModelShape) -> dict[str, ModelShape]:
    """MHA, GQA, MQA, MLA and a window on the model's own layers, heads and head width, for one chart.

    Choices: GQA keeps the model's key/value heads when it groups them, else heads / 4 (Llama-3-8B's ratio, at
    least 1); MLA is the model's own latent, else DeepSeek's proportions (latent 4 x head_dim, rotated key
    head_dim / 2); the window is GQA's cache with the model's window, else Mistral-7B's 4096.
    """
    layers, heads, d = shape.layers, shape.heads, shape.head_dim
    grouped = shape.kv_heads if not shape.mla and shape.kv_heads < heads else _divisor_at_most(heads, heads // 4)
    latent, rope = (shape.latent, shape.rope_dim) if shape.mla else (4 * d, max(d // 2, 1))
    return {
        "mha": ModelShape("MHA", layers, heads, heads, d),
        "gqa": ModelShape("GQA", layers, heads, grouped, d),
        "mqa": ModelShape("MQA", layers, heads, 1, d),
        "mla": ModelShape("MLA", layers, heads, heads, d, latent=latent, rope_dim=rope),
        "window": ModelShape("window", layers, heads, grouped, d, window=shape.window or 4096),
    }


def _divisor_at_most(n: int, at_most: int) -> int:
    """The largest divisor of n not above `at_most` (at least 1)."""
    return max(k for k in range(1, max(at_most, 1) + 1) if n % k == 0)


def curve_tokens(context: int, window: int = 0) -> list[int]:
    """Context lengths a chart samples: powers of 4 from 256 up to the first past `context` (1M at least), the
    context itself and the window's edge, ascending."""
    top = max(context, 2**20)
    tokens = {4**e for e in range(4, 13) if 4 ** (e - 1) < top}
    return sorted(tokens | {context} | ({window} if 0 < window < max(tokens) else set()))


def curves(
    shapes: dict[str, ModelShape], tokens: list[int], batch: int = 1, bytes_per_number: float = 2
) -> dict[str, list[float]]:
    """Each shape's whole cache at each context length: what the page's chart draws."""
    return {key: [cache_bytes(s, t, batch, bytes_per_number) for t in tokens] for key, s in shapes.items()}
