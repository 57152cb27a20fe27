"""capture() on the models people use today: rotary positions, grouped key/value heads, windows, soft-capping.

Each family is built here from a tiny config with random weights (nothing downloaded; initializer_range 0.2, so
the weights are far from uniform and a wrong rotation or mask shows), captured once per module. Every test checks
against what this file computes itself: the model's own eager `output_attentions`, the scores recomputed from the
recorded queries and keys by the rule the model's config states (written out here, not attnlab's), and the
recorded queries and keys against the projections' outputs rotated with `attnlab.positions.rope` at the config's θ.
"""

from __future__ import annotations

import re
from pathlib import Path

import plotly.graph_objects as go
import pytest
import torch

from attnlab.attnfile import capture, file_bytes, interface, load
from attnlab.figures import head_view, model_view
from attnlab.positions import rope
from tests.conftest import REFERENCE_GROUP
from tests.unit.test_attnfile_capture import hf

pytestmark = REFERENCE_GROUP  # with the other tests that import transformers: one worker imports it

TEXT = "the cat sat on the mat"  # 22 characters and <bos>: longer than the window
WINDOW = 5
TOL = 1e-5
SMALL = dict(vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, initializer_range=0.2)
DECODER = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, max_position_embeddings=64)
FAMILIES = {  # name: (model class, config class, what the family adds)
    "llama": ("LlamaForCausalLM", "LlamaConfig", dict(num_attention_heads=4, num_key_value_heads=2)),
    "qwen2": ("Qwen2ForCausalLM", "Qwen2Config", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=1e6)),
    "mistral": (
        "MistralForCausalLM",
        "MistralConfig",
        dict(num_attention_heads=4, num_key_value_heads=2, sliding_window=WINDOW),
    ),
    "gpt_neox": ("GPTNeoXForCausalLM", "GPTNeoXConfig", dict(hidden_size=64, num_attention_heads=4, rotary_pct=0.25)),
    "phi3": ("Phi3ForCausalLM", "Phi3Config", dict(num_attention_heads=4, num_key_value_heads=1)),
    "gemma2": (
        "Gemma2ForCausalLM",
        "Gemma2Config",
        dict(
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            sliding_window=WINDOW,
            query_pre_attn_scalar=12,
            attn_logit_softcapping=2.0,
        ),
    ),
}


class CharTokenizer:
    """Only what capture uses: one id per character after <bos>, and the characters back as tokens."""

    def __call__(self, text: str, return_tensors: str = "pt") -> dict[str, torch.Tensor]:
        return {"input_ids": torch.tensor([[1] + [3 + ord(c) % 60 for c in text]])}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return ["<bos>" if i == 1 else f"{i}" for i in ids]


def build(name: str):
    """A tiny random model of one family, as a user holds it: train mode, its default attention."""
    torch.manual_seed(0)
    model_class, config_class, extra = FAMILIES[name]
    return getattr(hf(), model_class)(getattr(hf(), config_class)(**(SMALL | DECODER | extra)))


def own_attentions(model, ids: torch.Tensor) -> torch.Tensor:
    """The model's own weights the documented way (eager attention, eval mode), (L, H, T, T)."""
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    model.eval()
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
    model.set_attn_implementation(before)
    return torch.stack(out.attentions)[:, 0]


@pytest.fixture(scope="module")
def captured():
    """Every family built and captured once: {name: (model, file, the model's own weights)}."""
    found = {}
    for name in FAMILIES:
        model = build(name)
        before = model.config._attn_implementation
        file = capture(model, CharTokenizer(), TEXT)["self"]
        assert model.training and model.config._attn_implementation == before != interface.NAME  # both restored
        found[name] = (model, file, own_attentions(model, CharTokenizer()(TEXT)["input_ids"]))
    return found


def config_rule(config, layer: int) -> tuple[float, float | None, int | None]:
    """(scale, cap, window) of one layer as the config states it (Gemma 2 alternates sliding and full layers)."""
    d = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    scalar = getattr(config, "query_pre_attn_scalar", None)
    scale = (scalar if scalar else d) ** -0.5
    cap = getattr(config, "attn_logit_softcapping", None)
    kinds = getattr(config, "layer_types", None)
    sliding = kinds[layer] == "sliding_attention" if kinds else getattr(config, "sliding_window", None) is not None
    return scale, cap, config.sliding_window if sliding else None


def recomputed(q: torch.Tensor, k: torch.Tensor, scale: float, cap: float | None, window: int | None) -> torch.Tensor:
    """softmax of (capped) q·kᵀ·scale under the causal mask (and window): q (H, T, d), k (H_kv, T, d) -> (H, T, T)."""
    k = k.repeat_interleave(q.size(0) // k.size(0), dim=0)  # query head h reads key head h // (H / H_kv)
    s = q @ k.transpose(-1, -2) * scale
    if cap is not None:
        s = cap * torch.tanh(s / cap)
    i, j = torch.arange(q.size(1)).unsqueeze(1), torch.arange(q.size(1)).unsqueeze(0)
    seen = (j <= i) & ((i - j < window) if window is not None else True)
    return s.masked_fill(~seen, float("-inf")).softmax(-1)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_recorded_queries_and_keys_give_back_the_models_own_weights(captured, name):
    model, f, want = captured[name]
    config = model.config
    kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    assert (f.attentions - want).abs().max() <= 1e-6 and f.causal and f.has_qk and not f.qk_declined
    assert f.queries.shape[:3] == want.shape[:3] and f.keys.shape[:3] == (config.num_hidden_layers, kv_heads, 23)
    for layer in range(config.num_hidden_layers):
        scale, cap, window = config_rule(config, layer)
        assert f.rule(layer) == pytest.approx((scale, cap, window))
        again = recomputed(f.queries[layer], f.keys[layer], scale, cap, window)
        assert (again - want[layer]).abs().max() <= TOL, (name, layer)
    back = load(f"{name}.safetensors", file_bytes(f))
    assert torch.equal(back.keys, f.keys) and (back.scale, back.softcap, back.window) == (f.scale, f.softcap, f.window)


def projections(model, ids: torch.Tensor) -> list[torch.Tensor]:
    """The output of every layer's q/k projection (q_proj and k_proj, or the fused one), recorded by hooks here."""
    seen = []
    names = ("q_proj", "k_proj", "query_key_value", "qkv_proj")
    hooks = [
        m.register_forward_hook(lambda _m, _i, out: seen.append(out[0]))
        for n, m in model.named_modules()
        if n.rsplit(".", 1)[-1] in names
    ]
    with torch.no_grad():
        model(input_ids=ids)
    for hook in hooks:
        hook.remove()
    return seen


def split(name: str, config, outputs: list[torch.Tensor], layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One layer's (H, T, d) queries and (H_kv, T, d) keys before RoPE, from its projections' outputs."""
    h = config.num_attention_heads
    h_kv = getattr(config, "num_key_value_heads", None) or h
    d = config.hidden_size // h
    if name == "gpt_neox":  # fused per head: [q_h | k_h | v_h]
        fused = outputs[layer].view(-1, h, 3 * d).transpose(0, 1)  # (H, T, 3d)
        return fused[..., :d], fused[..., d : 2 * d]
    if name == "phi3":  # fused [H·d | H_kv·d | H_kv·d]
        q, k = outputs[layer][:, : h * d], outputs[layer][:, h * d : (h + h_kv) * d]
    else:
        q, k = outputs[2 * layer], outputs[2 * layer + 1]
    return q.view(-1, h, d).transpose(0, 1), k.view(-1, h_kv, d).transpose(0, 1)


@pytest.mark.parametrize("name", ["llama", "qwen2", "gpt_neox", "phi3"])
def test_queries_and_keys_are_the_projections_rotated_at_the_configs_theta(captured, name):
    """After RoPE (θ from the config: 1e6 for this Qwen2; a quarter of each head for GPT-NeoX), biases included."""
    model, f, _ = captured[name]
    config = model.config
    theta = config.rope_parameters["rope_theta"]
    rotated = int(f.queries.size(-1) * config.rope_parameters.get("partial_rotary_factor", 1.0))
    outputs = projections(model, CharTokenizer()(TEXT)["input_ids"])
    for layer in range(config.num_hidden_layers):
        for got, raw in zip((f.queries[layer], f.keys[layer]), split(name, config, outputs, layer), strict=True):
            want = torch.cat([rope(raw[..., :rotated], base=theta), raw[..., rotated:]], dim=-1)
            assert (got - want).abs().max() <= TOL, (name, layer)
            assert (got - raw).abs().max() > 1e-2  # the rotation changed something: this is not pre-RoPE


def test_mistrals_window_comes_from_the_mask_the_attention_received(captured):
    model, f, want = captured["mistral"]
    assert f.window == (WINDOW, WINDOW) and len(f.tokens) > WINDOW
    plain_causal = recomputed(f.queries[0], f.keys[0], f.rule(0)[0], None, None)
    assert (plain_causal - want[0]).abs().max() > 1e-2  # a check under the plain causal mask would have failed
    assert float(want[0, :, WINDOW:, 0].max()) == 0.0  # the first key is out of sight past the window


def test_gemma2_records_its_rule_the_cap_and_the_alternating_window(captured):
    model, f, want = captured["gemma2"]
    assert f.softcap == (2.0, 2.0) and f.scale == pytest.approx((12**-0.5,) * 2)
    assert f.window == tuple(config_rule(model.config, layer)[2] for layer in range(2)) and WINDOW in f.window
    uncapped = recomputed(f.queries[0], f.keys[0], f.scale[0], None, f.window[0])
    assert (uncapped - want[0]).abs().max() > 1e-2  # without the cap the scores would not give the weights back


def test_a_model_with_a_position_bias_declines_and_says_why():
    """T5 adds a learned position bias to its scores: no queries and keys, and the reason is kept in the file."""
    torch.manual_seed(0)
    config = hf().T5Config(d_model=16, d_kv=4, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2, **SMALL)
    files = capture(hf().T5ForConditionalGeneration(config), CharTokenizer(), TEXT, target="le chat")
    assert files["encoder"].qk_declined == files["decoder"].qk_declined == "extra_scores"
    assert not files["encoder"].has_qk and load("t5.safetensors", file_bytes(files["encoder"])).qk_declined


def test_the_hook_route_still_declines_rotary_models(captured, monkeypatch):
    """Where the model offers no attention interface, projections are recorded: before RoPE, so Llama declines."""
    monkeypatch.setattr(interface, "registries", lambda model: None)
    f = capture(build("llama"), CharTokenizer(), TEXT)["self"]
    assert not f.has_qk and f.qk_declined == "hooks" and torch.equal(f.attentions, captured["llama"][1].attentions)


def test_a_bfloat16_model_is_checked_at_the_half_tolerance():
    model = build("llama").to(torch.bfloat16)
    f = capture(model, CharTokenizer(), TEXT)["self"]
    assert f.has_qk and f.keys.shape[1] == 2 and model.dtype == torch.bfloat16


def test_bertviz_call_shape_on_a_llamas_outputs(captured):
    model, f, _ = captured["llama"]
    model.set_attn_implementation("eager")
    with torch.no_grad():
        out = model.eval()(input_ids=CharTokenizer()(TEXT)["input_ids"], output_attentions=True)
    model.set_attn_implementation("sdpa")
    model.train()
    tokens = list(f.tokens)
    lines = head_view(out.attentions, tokens, layer=1, head=3, query=7)
    assert [t.to_plotly_json() for t in lines.data] == [t.to_plotly_json() for t in head_view(f, 1, 3, query=7).data]
    assert len(model_view(out.attentions, tokens).data) == len(model_view(f).data)


def test_the_readmes_llama_example_runs(monkeypatch, tmp_path):
    """README's Llama-family block, run as written, with a tiny random Llama of the same head layout in place of the
    checkpoint it names (9 query heads on 3 key/value heads; nothing downloaded)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "AutoModelForCausalLM" in b]
    torch.manual_seed(0)
    layout = dict(num_attention_heads=9, num_key_value_heads=3, hidden_size=72, num_hidden_layers=13)
    tiny = hf().LlamaForCausalLM(hf().LlamaConfig(**(SMALL | DECODER | layout)))
    monkeypatch.setattr(hf().AutoModelForCausalLM, "from_pretrained", lambda name: tiny)
    monkeypatch.setattr(hf().AutoTokenizer, "from_pretrained", lambda name: CharTokenizer())
    shown = []
    monkeypatch.setattr(go.Figure, "show", lambda fig, *a, **kw: shown.append(fig))
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    part = scope["part"]
    assert part.keys.shape[:2] == (13, 3) and part.kv_head(4) == 1 and not part.qk_declined and len(shown) == 2
    assert load("smollm2.safetensors", (tmp_path / "smollm2.safetensors").read_bytes()).n_kv_heads == 3
