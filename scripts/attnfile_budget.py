"""The attention-file budget (DESIGN): a 12-layer x 12-head, 128-token file loads and draws its model view in <= 1 s.

Server side, as the Attention file page does it: `attnfile.load` on the uploaded bytes, then the model view
figure (the 144 maps pooled into one PNG, the click markers) turned into the JSON Streamlit sends. Each
repeat is timed on its own and the median is reported (the machine may be shared: run it a few times).

    python scripts/attnfile_budget.py [--layers 12 --heads 12 --tokens 128 --head-dim 64 --repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import plotly.io as pio
import torch

from attnlab import attnfile
from attnlab.figures.pretrained import model_view_figure

BUDGET_S = 1.0


def file_bytes(layers: int, heads: int, tokens: int, head_dim: int, with_qk: bool) -> bytes:
    """A file of random softmax weights (and queries and keys) written by attnfile.save."""
    g = torch.Generator().manual_seed(0)
    q = torch.randn(layers, heads, tokens, head_dim, generator=g)
    k = torch.randn(layers, heads, tokens, head_dim, generator=g)
    weights = torch.softmax(q @ k.transpose(-1, -2) / head_dim**0.5, dim=-1)  # (L, H, T, T)
    names = [f"tok{i}" for i in range(tokens)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "budget.safetensors"
        extra = dict(queries=q, keys=k) if with_qk else {}
        attnfile.save(path, weights, names, model="budget", **extra)
        return path.read_bytes()


def one_run(data: bytes) -> tuple[float, float, int]:
    """Seconds to load, seconds to build and serialise the model view, and the bytes of that JSON."""
    start = time.perf_counter()
    file = attnfile.load("budget.safetensors", data)
    loaded = time.perf_counter()
    figure = model_view_figure(file.attentions.numpy(), "Layer", "Head", (0, 0))
    sent = pio.to_json(figure.to_dict(), validate=False)
    drawn = time.perf_counter()
    return loaded - start, drawn - loaded, len(sent)


def main() -> None:
    """Measure and print one JSON line per file variant (with and without queries and keys)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    for with_qk in (False, True):
        data = file_bytes(args.layers, args.heads, args.tokens, args.head_dim, with_qk)
        one_run(data)  # warm: imports, Plotly's colour scales, the first PNG encoder call
        runs = [one_run(data) for _ in range(args.repeats)]
        load_s = statistics.median(r[0] for r in runs)
        draw_s = statistics.median(r[1] for r in runs)
        total_s = statistics.median(r[0] + r[1] for r in runs)
        row = dict(
            layers=args.layers,
            heads=args.heads,
            tokens=args.tokens,
            queries_and_keys=with_qk,
            file_bytes=len(data),
            median_load_s=round(load_s, 4),
            median_model_view_s=round(draw_s, 4),
            median_total_s=round(total_s, 4),
            figure_json_bytes=runs[0][2],
            budget_s=BUDGET_S,
            within=total_s <= BUDGET_S,
        )
        print(json.dumps(row))


if __name__ == "__main__":
    main()
