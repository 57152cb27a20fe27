"""What recording queries and keys costs: attnfile.capture against the model's own eager forward (issue 51: <= 20 %).

A Llama-family model is built from a config with random weights (nothing downloaded; by default SmolLM-135M's
shape: 30 layers, 9 query heads on 3 key/value heads of 64, 576 wide), in float32, on T tokens of text. The
baseline is what a user runs for the weights alone: eval mode, eager attention, `output_attentions=True`, no_grad.
The capture is `attnlab.attnfile.capture(model, tokenizer, text)` whole: tokenizing, the forward through the
attention interface, every layer's record and check, the check of the file's stated rule, the files built. The
two alternate, after a warm-up of each, and each is reported as the median of the repeats with p20/p80, in wall
time and in this process's CPU time (on a machine other work keeps busy, CPU time with one thread is the steadier
measure of the work done); the overhead is the ratio of the medians minus one, for each clock. transformers is
imported here (a measurement, not the library).

    python -m scripts.capture_overhead [--family llama|mistral|gemma2] [--tokens 128] [--repeats 9] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SHAPE = dict(  # SmolLM-135M's shape (HuggingFaceTB/SmolLM-135M config.json)
    vocab_size=49152,
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    max_position_embeddings=2048,
)
FAMILIES = {
    "llama": ("LlamaForCausalLM", "LlamaConfig", {}),
    "mistral": ("MistralForCausalLM", "MistralConfig", {"sliding_window": 64}),
    "gemma2": ("Gemma2ForCausalLM", "Gemma2Config", {"head_dim": 64, "sliding_window": 64}),
}


class CharTokenizer:
    """One id per character, <bos> first: what capture needs (__call__ and convert_ids_to_tokens)."""

    def __call__(self, text: str, return_tensors: str = "pt") -> dict[str, torch.Tensor]:
        return {"input_ids": torch.tensor([[1] + [3 + ord(c) % 90 for c in text]])}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return ["<bos>" if i == 1 else chr(i - 3 + 32) for i in ids]


def build(family: str):
    """The random model, in eval mode, as a user would hold it (its default attention)."""
    import transformers

    torch.manual_seed(0)
    model_class, config_class, extra = FAMILIES[family]
    config = getattr(transformers, config_class)(**(SHAPE | extra))
    return getattr(transformers, model_class)(config).eval()


def eager_forward(model, ids: torch.Tensor) -> None:
    """The baseline: the model's own eager attention with its weights returned."""
    with torch.no_grad():
        model(input_ids=ids, output_attentions=True, return_dict=True)


def stats(seconds: list[float]) -> dict[str, float]:
    """Median, p20/p80 and the fastest in milliseconds."""
    q = statistics.quantiles(seconds, n=10)
    return {
        "median_ms": 1e3 * statistics.median(seconds),
        "p20_ms": 1e3 * q[1],
        "p80_ms": 1e3 * q[7],
        "min_ms": 1e3 * min(seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", choices=sorted(FAMILIES), default="llama")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from attnlab.attnfile import capture

    model = build(args.family)
    tokenizer = CharTokenizer()
    text = ("The animal didn't cross the street because it was too tired. " * 8)[: args.tokens - 1]
    ids = tokenizer(text)["input_ids"]
    model.set_attn_implementation("eager")
    files = capture(model, tokenizer, text)  # warm-up of both, and what the capture keeps
    eager_forward(model, ids)
    clocks = {"wall": time.perf_counter, "cpu": time.process_time}
    runs = {(name, clock): [] for name in ("eager_forward", "capture") for clock in clocks}
    calls = {"eager_forward": lambda: eager_forward(model, ids), "capture": lambda: capture(model, tokenizer, text)}
    for _ in range(args.repeats):
        for name, call in calls.items():
            wall, cpu = time.perf_counter(), time.process_time()
            call()
            runs[(name, "wall")].append(time.perf_counter() - wall)
            runs[(name, "cpu")].append(time.process_time() - cpu)
    f = files["self"]
    report = {
        "family": args.family,
        "tokens": ids.size(1),
        "threads": args.threads,
        "kept_qk": f.has_qk,
        "qk_declined": f.qk_declined,
        "keys": list(f.keys.shape) if f.has_qk else None,
        **{f"{name}_{clock}": stats(values) for (name, clock), values in runs.items()},
        **{
            f"overhead_{clock}": statistics.median(runs[("capture", clock)])
            / statistics.median(runs[("eager_forward", clock)])
            - 1
            for clock in clocks
        },
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
