"""A Llama-family model's shape, read from and written to transformers' config.json keys.

Three families share one forward pass here: Llama (optionally `attention_bias` on q, k, v and o), Qwen2 (biases on
q, k and v, always) and Mistral (a sliding window on every layer). Qwen2's `use_sliding_window` and any family's
`layer_types` say which layers slide. θ is read from `rope_theta` or from `rope_parameters` (transformers 5 writes
the latter); only the plain ("default") rotary frequencies are taken: a scaled rope (llama3, yarn, ...) is refused,
since attnlab.positions.rope rotates by base**(-2i/d) alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

ARCHITECTURES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mistral": "MistralForCausalLM"}
MODEL_TYPES = {arch: kind for kind, arch in ARCHITECTURES.items()}
SIZE_KEYS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")
MAX_SIZE = 2**20  # any single size past this is no model this loader could hold (refused before arithmetic)


@dataclass(frozen=True)
class LMConfig:
    """Everything the forward pass needs; `windows` holds each layer's sliding window (None: every earlier key)."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rope_theta: float = 10000.0
    max_position_embeddings: int = 256
    rms_norm_eps: float = 1e-6
    tie_word_embeddings: bool = True
    model_type: str = "llama"
    qkv_bias: bool = False
    o_bias: bool = False
    windows: tuple[int | None, ...] = ()
    bos_token_id: int | None = None

    def __post_init__(self) -> None:
        if not self.windows:
            object.__setattr__(self, "windows", (None,) * self.num_hidden_layers)

    @property
    def group(self) -> int:
        """Query heads per key/value head: query head h reads key/value head h // group."""
        return self.num_attention_heads // self.num_key_value_heads

    @property
    def mapping(self) -> MappingProxyType:
        """The transformers keys contract 16 names (and the few more a reader needs), read-only."""
        keys = (
            *SIZE_KEYS,
            "num_key_value_heads",
            "head_dim",
            "rope_theta",
            "max_position_embeddings",
            "rms_norm_eps",
            "tie_word_embeddings",
            "model_type",
        )
        return MappingProxyType({k: getattr(self, k) for k in keys} | {"sliding_window": self.sliding_window})

    @property
    def sliding_window(self) -> int | None:
        """The window of the layers that slide (they share one), None when none does."""
        return next((w for w in self.windows if w is not None), None)

    def parameters(self) -> int:
        """How many numbers the weights hold, from the shapes alone (before anything is allocated)."""
        d, hd, h, kv = self.hidden_size, self.head_dim, self.num_attention_heads, self.num_key_value_heads
        attn = d * h * hd * 2 + d * kv * hd * 2 + (h * hd + 2 * kv * hd) * self.qkv_bias + d * self.o_bias
        layer = attn + 3 * d * self.intermediate_size + 2 * d
        heads = self.vocab_size * d * (1 if self.tie_word_embeddings else 2)
        return self.num_hidden_layers * layer + heads + d

    def to_hf(self) -> dict:
        """config.json as transformers writes it for this family (θ under both spellings, for 4.x and 5.x readers)."""
        out = {
            "architectures": [ARCHITECTURES[self.model_type]],
            "model_type": self.model_type,
            **{k: getattr(self, k) for k in SIZE_KEYS},
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "hidden_act": "silu",
            "max_position_embeddings": self.max_position_embeddings,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "rope_parameters": {"rope_type": "default", "rope_theta": self.rope_theta},
            "tie_word_embeddings": self.tie_word_embeddings,
            "bos_token_id": self.bos_token_id,
            "torch_dtype": "float32",
        }
        if self.model_type == "llama":
            out |= {"attention_bias": self.qkv_bias, "mlp_bias": False}
        if self.model_type == "mistral":
            out["sliding_window"] = self.sliding_window
        if self.model_type == "qwen2":
            out |= {"use_sliding_window": self.sliding_window is not None, "sliding_window": self.sliding_window}
            out["layer_types"] = ["full_attention" if w is None else "sliding_attention" for w in self.windows]
        return out


def _int(raw: dict, key: str, default: int | None = None) -> int:
    """A positive whole size from config.json, or ValueError naming the key."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        raise ValueError(f"config.json: {key} must be a whole number from 1 to {MAX_SIZE}, got {str(value)[:40]!r}")
    return value


def _theta(raw: dict) -> float:
    """θ from rope_theta or rope_parameters; a scaled rope is refused (attnlab rotates by base**(-2i/d) only)."""
    params = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
    if not isinstance(params, dict):
        raise ValueError("config.json: rope_parameters must be an object")
    kind = params.get("rope_type", params.get("type", "default"))
    if kind != "default":
        raise ValueError(f"config.json: rope_type {str(kind)[:40]!r} is not supported (only the plain rotary rope)")
    theta = params.get("rope_theta", raw.get("rope_theta", 10000.0))
    if isinstance(theta, bool) or not isinstance(theta, int | float) or not 1.0 < theta < 1e12:
        raise ValueError(f"config.json: rope_theta must be a number above 1, got {str(theta)[:40]!r}")
    return float(theta)


def _windows(raw: dict, kind: str, layers: int) -> tuple[int | None, ...]:
    """Each layer's sliding window: Mistral's on every layer, Qwen2's where use_sliding_window and layer_types say."""
    window = raw.get("sliding_window")
    if window is None or (kind == "qwen2" and not raw.get("use_sliding_window", False)) or kind == "llama":
        return (None,) * layers
    window = _int(raw, "sliding_window")
    types = raw.get("layer_types")
    if types is None and kind == "qwen2":
        first = raw.get("max_window_layers", layers)
        types = ["full_attention" if i < first else "sliding_attention" for i in range(layers)]
    if types is None:
        return (window,) * layers
    if not isinstance(types, list) or len(types) != layers:
        raise ValueError(f"config.json: layer_types must list one type per layer ({layers})")
    return tuple(window if t == "sliding_attention" else None for t in types)


def from_hf(raw: object) -> LMConfig:
    """LMConfig from a parsed config.json; ValueError with one line naming what cannot be honoured."""
    if not isinstance(raw, dict):
        raise ValueError("config.json is not a JSON object")
    arch = (raw.get("architectures") or [None])[0]
    kind = MODEL_TYPES.get(arch) if arch is not None else raw.get("model_type")
    if kind not in ARCHITECTURES:
        raise ValueError(f"config.json: {str(arch or raw.get('model_type'))[:60]!r} is not Llama, Qwen2 or Mistral")
    if raw.get("hidden_act", "silu") != "silu" or raw.get("mlp_bias", False):
        raise ValueError("config.json: only SwiGLU feed-forward layers (hidden_act silu, no mlp_bias) are supported")
    sizes = {k: _int(raw, k) for k in SIZE_KEYS}
    heads = sizes["num_attention_heads"]
    kv = _int(raw, "num_key_value_heads", heads)
    if heads % kv:
        raise ValueError(f"config.json: num_key_value_heads ({kv}) must divide num_attention_heads ({heads})")
    head_dim = raw.get("head_dim") or sizes["hidden_size"] // heads
    head_dim = _int({"head_dim": head_dim}, "head_dim")
    if head_dim % 2:
        raise ValueError(f"config.json: head_dim must be even for the rotary rope, got {head_dim}")
    eps = raw.get("rms_norm_eps", 1e-6)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1 or not math.isfinite(eps):
        raise ValueError(f"config.json: rms_norm_eps must be a small positive number, got {str(eps)[:40]!r}")
    bias = bool(raw.get("attention_bias", False)) if kind == "llama" else kind == "qwen2"
    bos = raw.get("bos_token_id")
    return LMConfig(
        **sizes,
        num_key_value_heads=kv,
        head_dim=head_dim,
        rope_theta=_theta(raw),
        max_position_embeddings=_int(raw, "max_position_embeddings", 2048),
        rms_norm_eps=float(eps),
        tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),  # transformers' default
        model_type=kind,
        qkv_bias=bias,
        o_bias=bias and kind == "llama",
        windows=_windows(raw, kind, sizes["num_hidden_layers"]),
        bos_token_id=bos if isinstance(bos, int) and not isinstance(bos, bool) else None,
    )
