"""The attention-file budget (DESIGN: 12 layers x 12 heads x 128 tokens loads and draws in <= 1 s server-side).

One function per measurement, each taking the file's bytes and returning a number, listed in MEASURES;
the model view (built and serialised as the Attention file page sends it) is measured there too. Each is
repeated and reported as the median with the spread, since the machine is shared.

    python -m scripts.attnfile_budget [--repeats 7] [--layers 12 --heads 12 --tokens 128 --head-dim 64]
    python -m scripts.attnfile_budget --layers 1 --heads 4 --tokens 2048 --head-dim 0   # the largest file allowed
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable

import plotly.io as pio
import torch

from attnlab.attnfile import AttentionFile, load, to_bytes
from attnlab.figures.pretrained import model_view_figure


def build(layers: int, heads: int, tokens: int, head_dim: int, seed: int = 0) -> bytes:
    """A file like a captured one: softmax rows from random q and k, with those queries and keys (unless d is 0)."""
    gen = torch.Generator().manual_seed(seed)
    d = max(head_dim, 8)  # --head-dim 0: a file without queries and keys
    q = torch.randn(layers, heads, tokens, d, generator=gen)  # (L, H, T, d)
    k = torch.randn(layers, heads, tokens, d, generator=gen)
    a = (q @ k.transpose(-2, -1) / d**0.5).softmax(dim=-1)  # (L, H, T, T)
    words = [f"tok{i}" for i in range(tokens)]
    qk = {"queries": q, "keys": k} if head_dim else {}
    return to_bytes(a, words, model="budget", **qk)


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure_load(data: bytes) -> float:
    """attnlab.attnfile.load on the whole file: header checks, decoding, value checks."""
    return timed(lambda: load("budget.safetensors", data))


def loaded(data: bytes) -> AttentionFile:
    """The file as the page holds it, for measurements of what happens after loading."""
    return load("budget.safetensors", data)


def measure_peak_mb(data: bytes) -> float:
    """MiB that load allocates at its peak (tracemalloc: numpy and torch buffers included), beyond the upload."""
    tracemalloc.start()
    try:
        load("budget.safetensors", data)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def model_view_json(file: AttentionFile) -> str:
    """The Attention file page's model view of a file, as the JSON Streamlit sends (144 maps in one PNG, markers)."""
    figure = model_view_figure(file.attentions.numpy(), "Layer", "Head", (0, 0))  # (L, H, T_q, T_k)
    return pio.to_json(figure.to_dict(), validate=False)


def measure_model_view(data: bytes) -> float:
    """Building and serialising the model view of the loaded file."""
    file = loaded(data)
    return timed(lambda: model_view_json(file))


def measure_load_and_view(data: bytes) -> float:
    """The budget itself: load, then the model view, one after the other."""
    return timed(lambda: model_view_json(loaded(data)))


def measure_view_kib(data: bytes) -> float:
    """KiB of the model view's JSON (what one rerun of that view sends, besides the page's text)."""
    return len(model_view_json(loaded(data))) / 2**10


MEASURES: dict[str, Callable[[bytes], float]] = {
    "load_s": measure_load,
    "load_peak_mib": measure_peak_mb,
    "model_view_s": measure_model_view,
    "load_and_model_view_s": measure_load_and_view,
    "model_view_kib": measure_view_kib,
}


def main() -> None:
    """Build the file once, run every measure `repeats` times, print a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    data = build(args.layers, args.heads, args.tokens, args.head_dim)
    report: dict[str, object] = {"file_bytes": len(data), **vars(args)}
    for name, measure in MEASURES.items():
        measure(data)  # warm-up: imports, allocator
        times = sorted(measure(data) for _ in range(args.repeats))
        report[name] = {"median": statistics.median(times), "min": times[0], "max": times[-1]}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
