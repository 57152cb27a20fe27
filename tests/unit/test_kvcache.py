"""The cache of real models (contract 14): the table against its configs' arithmetic, the formula, the bad shapes."""

from __future__ import annotations

import pytest

from attnlab.kvcache import (
    BYTES,
    H100_BYTES,
    MODELS,
    PARAMETERS,
    ModelShape,
    bytes_per_token,
    cache_bytes,
    naive_bytes_per_token,
    same_width,
    tokens_that_fit,
    weight_bytes,
)

# The fields of each config.json that the cache and the parameter count read, as the files write them.
CONFIGS = {
    "gpt2": dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024, vocab_size=50257),
    "llama-3-8b": dict(
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        hidden_size=4096,
        intermediate_size=14336,
        vocab_size=128256,
    ),
    "llama-3-70b": dict(
        num_hidden_layers=80,
        num_attention_heads=64,
        num_key_value_heads=8,
        hidden_size=8192,
        intermediate_size=28672,
        vocab_size=128256,
    ),
    "mistral-7b": dict(
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        hidden_size=4096,
        intermediate_size=14336,
        vocab_size=32000,
        sliding_window=4096,
    ),
    "qwen2.5-7b": dict(
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        hidden_size=3584,
        intermediate_size=18944,
        vocab_size=152064,
    ),
    "deepseek-v3": dict(
        num_hidden_layers=61,
        num_attention_heads=128,
        num_key_value_heads=128,
        hidden_size=7168,
        intermediate_size=18432,
        vocab_size=129280,
        q_lora_rank=1536,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
        n_routed_experts=256,
        n_shared_experts=1,
        moe_intermediate_size=2048,
        first_k_dense_replace=3,
    ),
}


def gpt2_parameters(c: dict) -> int:
    """Token and position embeddings (the output layer is tied), 12 blocks of LayerNorms, attention and a 4x MLP."""
    h = c["n_embd"]
    block = 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h)
    return c["vocab_size"] * h + c["n_positions"] * h + c["n_layer"] * block + 2 * h


def llama_parameters(c: dict, qkv_bias: bool = False) -> int:
    """Untied embeddings and output, then per layer q, k, v, o, a gated MLP and two RMSNorms; one final norm."""
    h, heads, kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    d = h // heads
    layer = h * heads * d + 2 * h * kv * d + heads * d * h + 3 * h * c["intermediate_size"] + 2 * h
    layer += (heads * d + 2 * kv * d) if qkv_bias else 0
    return 2 * c["vocab_size"] * h + c["num_hidden_layers"] * layer + h


def deepseek_parameters(c: dict) -> int:
    """MLA in every layer; dense MLPs in the first layers, then routed and shared experts with their router."""
    h, heads, layers = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    ql, kl, v = c["q_lora_rank"], c["kv_lora_rank"], c["v_head_dim"]
    nope, rope = c["qk_nope_head_dim"], c["qk_rope_head_dim"]
    attention = (
        h * ql + ql + ql * heads * (nope + rope) + h * (kl + rope) + kl + kl * heads * (nope + v) + heads * v * h
    )
    dense = 3 * h * c["intermediate_size"]
    experts = c["n_routed_experts"] + c["n_shared_experts"]
    moe = experts * 3 * h * c["moe_intermediate_size"] + c["n_routed_experts"] * (h + 1)  # router and its bias
    dense_layers = c["first_k_dense_replace"]
    return (
        2 * c["vocab_size"] * h
        + layers * (attention + 2 * h)
        + dense_layers * dense
        + (layers - dense_layers) * moe
        + h
    )


def test_each_shape_is_its_configs_arithmetic_and_names_its_config_file():
    for name, c in CONFIGS.items():
        shape = MODELS[name]
        layers = c.get("num_hidden_layers", c.get("n_layer"))
        heads = c.get("num_attention_heads", c.get("n_head"))
        kv = c.get("num_key_value_heads", heads)
        width = c.get("hidden_size", c.get("n_embd"))
        assert (shape.layers, shape.heads, shape.kv_heads) == (layers, heads, kv), name
        assert shape.window == c.get("sliding_window", 0)
        assert shape.source.endswith("/config.json") and shape.source.count("/") == 2
        if "kv_lora_rank" in c:
            assert (shape.latent, shape.rope_dim) == (c["kv_lora_rank"], c["qk_rope_head_dim"])
            assert shape.head_dim == c["v_head_dim"] == c["qk_nope_head_dim"]
            assert bytes_per_token(shape) == layers * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * 2
        else:
            assert shape.head_dim == width // heads
            assert bytes_per_token(shape) == 2 * layers * kv * (width // heads) * 2


def test_parameter_counts_are_the_configs_arithmetic_and_the_published_sizes():
    assert PARAMETERS["gpt2"] == gpt2_parameters(CONFIGS["gpt2"])
    for name in ("llama-3-8b", "llama-3-70b", "mistral-7b"):
        assert PARAMETERS[name] == llama_parameters(CONFIGS[name]), name
    assert PARAMETERS["qwen2.5-7b"] == llama_parameters(CONFIGS["qwen2.5-7b"], qkv_bias=True)
    assert PARAMETERS["deepseek-v3"] == deepseek_parameters(CONFIGS["deepseek-v3"])
    published = {"gpt2": 124e6, "llama-3-8b": 8.03e9, "llama-3-70b": 70.6e9, "mistral-7b": 7.24e9}
    published |= {"qwen2.5-7b": 7.61e9, "deepseek-v3": 671e9}
    for name, size in published.items():
        assert PARAMETERS[name] == pytest.approx(size, rel=5e-3), name


def test_worked_numbers_llama_128_kib_per_token_and_deepseek_v2s_four_and_a_half_head_widths():
    assert bytes_per_token(MODELS["llama-3-8b"]) == 128 * 1024  # 2 x 32 x 8 x 128 x 2 bytes
    assert bytes_per_token(MODELS["gpt2"]) == 36_864  # 2 x 12 x 12 x 64 x 2 bytes
    ds = MODELS["deepseek-v3"]
    assert ds.latent + ds.rope_dim == 4.5 * ds.head_dim  # DeepSeek-V2's paper: (d_c + d_h^R) l = 4.5 d_h l
    assert bytes_per_token(ds) == 70_272
    assert naive_bytes_per_token(ds) == 2 * 61 * 128 * 128 * 2 == 3_997_696  # the 128 listed heads: 57x too much
    assert naive_bytes_per_token(MODELS["qwen2.5-7b"]) == bytes_per_token(MODELS["qwen2.5-7b"])


def test_the_cache_scales_with_batch_and_tokens_and_stops_at_the_window():
    llama, mistral = MODELS["llama-3-8b"], MODELS["mistral-7b"]
    assert cache_bytes(llama, 8192, batch=4) == 128 * 1024 * 8192 * 4
    assert cache_bytes(llama, 8192, bytes_per_number=BYTES["int4"]) == 32 * 1024 * 8192
    assert cache_bytes(mistral, 32768) == cache_bytes(mistral, 4096) == 4096 * 128 * 1024
    assert cache_bytes(mistral, 100) == 100 * 128 * 1024
    assert cache_bytes(llama, 0) == 0


def test_tokens_beside_the_weights_on_an_h100():
    llama = MODELS["llama-3-8b"]
    free = H100_BYTES - PARAMETERS["llama-3-8b"] * 2
    assert tokens_that_fit(llama, PARAMETERS["llama-3-8b"]) == free // (128 * 1024) == 487_819
    assert tokens_that_fit(llama, PARAMETERS["llama-3-8b"], batch=8) == free // (8 * 128 * 1024)
    assert tokens_that_fit(MODELS["deepseek-v3"], PARAMETERS["deepseek-v3"], bytes_per_number=1) == 0
    assert tokens_that_fit(MODELS["mistral-7b"], PARAMETERS["mistral-7b"]) is None  # its window fits: any length
    assert weight_bytes(PARAMETERS["llama-3-70b"], 2) > H100_BYTES
    assert tokens_that_fit(MODELS["llama-3-70b"], PARAMETERS["llama-3-70b"], bytes_per_number=0.5) > 100_000


def test_same_width_compares_the_five_on_the_models_own_layers_heads_and_width():
    llama = same_width(MODELS["llama-3-8b"])
    per_token = {k: bytes_per_token(s) for k, s in llama.items()}
    assert per_token["mha"] == 2 * 32 * 32 * 128 * 2 == 4 * per_token["gqa"] == 32 * per_token["mqa"]
    assert per_token["mla"] == 32 * (512 + 64) * 2 and llama["window"].window == 4096
    ds = same_width(MODELS["deepseek-v3"])
    assert (ds["mla"].latent, ds["mla"].rope_dim) == (512, 64) and ds["gqa"].kv_heads == 32
    assert same_width(MODELS["mistral-7b"])["window"].window == 4096
    assert same_width(ModelShape("one", 1, 1, 1, 1))["gqa"].kv_heads == 1


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        (dict(layers=0), "layers"),
        (dict(heads=-2), "heads"),
        (dict(kv_heads=0), "kv_heads"),
        (dict(head_dim=0), "head_dim"),
        (dict(kv_heads=3), "kv_heads"),
        (dict(latent=-1), "latent"),
        (dict(rope_dim=64), "rope_dim"),
        (dict(window=-1), "window"),
        (dict(layers=2.5), "layers"),
    ],
)
def test_bad_shapes_raise_naming_the_field(fields, named):
    base = dict(name="x", layers=2, heads=8, kv_heads=2, head_dim=16)
    with pytest.raises(ValueError, match=named):
        ModelShape(**(base | fields))


def test_bad_arithmetic_arguments_raise_naming_them():
    shape = MODELS["gpt2"]
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="bytes_per_number"):
            bytes_per_token(shape, bad)
    with pytest.raises(ValueError, match="batch"):
        cache_bytes(shape, 10, batch=0)
    with pytest.raises(ValueError, match="tokens"):
        cache_bytes(shape, -1)
