"""The notebook recipes of the lessons and the Performance pages: each page's figures from its core module's numbers."""

from __future__ import annotations

from typing import Any

from attnlab.lessons.dictionary import KEYS
from attnlab.links import Replaced
from attnlab.notebook.cells import lit
from attnlab.notebook.recipe import Figure, Recipe


def head(v: dict[str, Any], imports: str) -> str:
    return f"{imports}\nfrom attnlab.figures import palette\n\npalette.use({lit(v['palette'])})\n"


def dictionary_setup(v: dict[str, Any]) -> str:
    keys = ", ".join(f"{lit(v['k_' + k])}" for k in KEYS)
    values = ", ".join(str(v["v_" + k]) for k in KEYS)
    return (
        head(
            v,
            "import numpy as np\n\nfrom attnlab.figures.lessons import temperature_figure, weights_bar\n"
            "from attnlab.lessons import dictionary as lesson\nfrom attnlab.lessons.parse import parse_vector",
        )
        + f"""
values, temp = [{values}], {v["temp"]}


def vector(text, default):
    \"\"\"A typed vector, or the lesson's own when it cannot be read (as the page falls back).\"\"\"
    try:
        return list(parse_vector(text))
    except ValueError:
        return list(default)


q = vector({lit(v["q"])}, lesson.QUERY_VECTOR)
keys = [vector(text, default) for text, default in zip([{keys}], lesson.KEY_VECTORS)]
if len({{len(q), *map(len, keys)}}) > 1:  # lengths that differ: the page uses the lesson's vectors
    q, keys = list(lesson.QUERY_VECTOR), [list(k) for k in lesson.KEY_VECTORS]
soft = lesson.soft_lookup(q, keys, values, temp)
temps = lesson.sweep_temperatures(3.0)
sweep, _ = lesson.temperature_sweep(q, keys, values, temps)
"""
    )


def scaling_setup(v: dict[str, Any]) -> str:
    return (
        head(
            v,
            "from attnlab.figures.lessons import saturation_figure, variance_figure, weights_bar\n"
            "from attnlab.lessons import scaling as lesson",
        )
        + f"""
dk, n_keys, scaled, seed = {v["dk"]}, {v["keys"]}, {v["scaled"]}, {v["seed"]}
grid = tuple(lesson.dk_grid(dk))
curve = lesson.variance_curve(grid, 4000, seed)
one = lesson.one_query(dk, n_keys, scaled, seed)
"""
    )


def positions_setup(v: dict[str, Any]) -> str:
    return (
        head(
            v,
            "from attnlab.figures import dim_labels, matrix_figure\nfrom attnlab.figures.lessons import pe_figure\n"
            "from attnlab.lessons import positions as lesson\nfrom attnlab.tokens import tokenize",
        )
        + f"""
tokens, d_model, seed = tokenize({lit(v["text"])}), {v["d_model"]}, {v["seed"]}
order = lesson.permutation({lit(v["perm"])}, len(tokens), seed)
shown = lesson.equivariance(tokens, d_model, seed, order, positions={v["pe"]})
pe = lesson.pe_table({v["n_pos"]}, {v["pe_d"]})
"""
    )


def rope_setup(v: dict[str, Any]) -> str:
    return (
        head(
            v,
            "from attnlab.figures import grid_figure\nfrom attnlab.figures.rope import decay_figure, frequency_figure, "
            "pair_plane\nfrom attnlab.lessons import rope as lesson",
        )
        + f"""
d, base, interleaved, seed = {v["d"]}, {lit(float(v["base"]))}, {v["layout"] == "interleaved"}, {v["seed"]}
turn = lesson.pair_turn(d, base, {v["pair"]}, {v["pos"]}, seed, interleaved)
freq = lesson.pair_frequencies(d, base)
check = lesson.shift_check(d, base, seed, {v["shift"]}, interleaved)
found = lesson.decay(d, base, {v["dist"]}, seed, interleaved)
tokens = [f"t{{i}}" for i in range(lesson.N_TOKENS)]
"""
    )


def fix_rope(v: dict[str, Any]) -> list[Replaced]:
    """A pair past the last one at d becomes the last, as the page replaces it (and says so)."""
    last = v["d"] // 2 - 1
    if v["pair"] <= last:
        return []
    out = [Replaced("pair", str(v["pair"]), str(last), "out_of_range")]
    v["pair"] = last
    return out


ROPE_NAMES = "{'trail': 'earlier positions', 'start': 'first position shown', 'position': 'position'}"


def masking_setup(v: dict[str, Any]) -> str:
    return (
        head(
            v,
            "from attnlab.figures import matrix_figure\nfrom attnlab.lessons import masking as lesson\n"
            "from attnlab.tokens import tokenize",
        )
        + f"""
tokens = tokenize({lit(v["text"])})
check = lesson.parallel_vs_sequential(tokens)
"""
    )


def cost_setup(v: dict[str, Any]) -> str:
    return (
        head(v, "from attnlab.figures.lessons import rnn_figure")
        + f"""
rnn_t, rnn_d = {v["rnn_t"]}, {v["rnn_d"]}
names = {{"steps_title": "sequential steps", "flops_title": "work (FLOPs)", "rnn": "RNN", "attn": "attention"}}
"""
    )


def tiled_setup(v: dict[str, Any]) -> str:
    return (
        head(
            v,
            "import torch\n\nfrom attnlab.attention import attention_steps\nfrom attnlab.figures import dim_labels, "
            "grid_figure\nfrom attnlab.tiled import tiled_trace",
        )
        + f"""
T, d, causal = {v["T"]}, {v["d"]}, {v["causal"]}
gen = torch.Generator().manual_seed({v["seed"]})
q, k, v = (torch.randn(T, d, generator=gen, dtype=torch.float64) for _ in range(3))
full = attention_steps(q, k, v, is_causal=causal)
trace = tiled_trace(q, k, v, is_causal=causal, block_q={v["bq"]}, block_k={v["bk"]})
qs = [f"q{{i}}" for i in range(T)]
"""
    )


def bench_fix(v: dict[str, Any]) -> list[Replaced]:
    """The Benchmark page's reading of a link: an older causal=true is mask=causal, key/value heads divide heads."""
    link, out = v["link"], []
    if "mask" not in link and v["causal"]:
        v["mask"] = "causal"
    elif v["causal"] and v["mask"] != "causal":
        out.append(Replaced("causal", link["causal"], "false", "causal_vs_mask"))
    v["causal"] = v["mask"] == "causal"
    wanted = v["kv_heads"] if "kv_heads" in link else [v["heads"]]
    v["kv_heads"] = [k for k in wanted if v["heads"] % k == 0] or [v["heads"]]
    if v["kv_heads"] != wanted:
        out.append(Replaced("kv_heads", link["kv_heads"], ",".join(map(str, v["kv_heads"])), "kv_heads_not_dividing"))
    return out


def bench_setup(v: dict[str, Any]) -> str:
    """The Benchmark page's sweep, run where the notebook runs (its timings are that machine's, as the page's are the
    server's): the page's settings and timing budget, one config per key/value head count, one CPU thread as the
    page uses without a GPU, FlexAttention compiled where that machine can; drawn as the page first draws a run, every
    head its own keys and values (the page's other slices are a picker away there). The headline and the recorded
    runs stay the page's: they are files of the repository's data/gpu/, which an installed attnlab does not carry."""
    mask = {"window": f"window:{v['window']}", "documents": f"documents:{v['docs']}"}.get(v["mask"], v["mask"])
    return (
        head(
            v,
            "import torch\n\nfrom attnlab.bench import BenchConfig, ResultRow, run_benchmark\n"
            "from attnlab.figures.bench import memory_figure, tflops_figure, time_figure",
        )
        + f"""
configs = [
    BenchConfig(
        device="auto",
        dtypes=({lit(v["dtype"])},),
        seq_lens=tuple(sorted({lit(list(v["seq"]))})),
        heads={v["heads"]},
        head_dim={v["head_dim"]},
        batch={v["batch"]},
        kv_heads=kv,
        mask={lit(mask)},
        impls=tuple({lit(list(v["impls"]))}),
        threads=None if torch.cuda.is_available() else 1,
        warmup=2, min_reps=5, max_reps=100, min_time_s=0.1, max_time_s=1.0,
    )
    for kv in {lit(sorted(v["kv_heads"], reverse=True))}
]
doc = run_benchmark(configs)
rows = [ResultRow.from_dict(r) for r in doc["results"]]
rows = [r for r in rows if r.kv_heads == max(x.kv_heads for x in rows)]  # the page's first slice: a line per impl
print(doc["env"]["device_name"], "torch", doc["env"]["torch"])
"""
    )


LESSONS: dict[str, Recipe] = {
    "soft-dictionary": Recipe(
        "soft_dictionary",
        ("ldict",),
        dictionary_setup,
        lambda v: (
            Figure("dictionary_weights", f"weights_bar({lit(list(KEYS))}, soft.weights, 'weights', 'value', values)"),
            Figure("dictionary_sweep", f"temperature_figure(temps, sweep, {lit(list(KEYS))}, temp, 'τ', 'τ', 'w')"),
        ),
    ),
    "scaling": Recipe(
        "scaling",
        ("lscale",),
        scaling_setup,
        lambda v: (
            Figure(
                "scaling_variance",
                "variance_figure(curve.d_k, curve.var_raw, curve.std_err, curve.var_scaled, dk, "
                "{'theory': 'd_k', 'raw': 'Var(q·k)', 'scaled': 'Var(q·k/√d_k)', 'y': 'variance'}, 'Var(q·k)')",
            ),
            Figure(
                "scaling_one",
                "weights_bar([f'k{i + 1}' for i in range(n_keys)], one.weights, 'softmax')",
            ),
        ),
    ),
    "positions": Recipe(
        "positions",
        ("lpos",),
        positions_setup,
        lambda v: (
            Figure("positions_out", "matrix_figure(shown.out, tokens, dim_labels(d_model))"),
            Figure("positions_diff", 'matrix_figure(shown.difference, tokens, dim_labels(d_model), kind="positive")'),
            Figure("positions_pe", "pe_figure(pe, 'PE', 'dimension', 'position')"),
        ),
    ),
    "rope": Recipe(
        "rope",
        ("lrope",),
        rope_setup,
        lambda v: (
            Figure(
                "rope_plane",
                f"pair_plane(turn.trail, turn.positions, {ROPE_NAMES} | {{'now': f'position {{turn.pos}}', "
                "'x': f'd{turn.dims[0]}', 'y': f'd{turn.dims[1]}'}, f'pair {turn.pair}')",
            ),
            Figure(
                "rope_frequencies",
                "frequency_figure(freq.theta, freq.wavelength, turn.pair, "
                "{'theta': 'θ_i = base^(-2i/d)', 'wavelength': 'wavelength 2π/θ_i', 'pair': 'pair i'})",
            ),
            Figure(
                "rope_scores",
                "grid_figure([check.before, check.after, check.other], "
                "['positions from 0', f'positions from {check.shift}', 'the other pairing'], tokens, tokens)",
            ),
            Figure(
                "rope_decay",
                "decay_figure(found.distances, {'bound': found.bound, 'same': found.same}, "
                "{'bound': 'relative upper bound', 'same': 'q against itself', 'x': 'relative distance r', "
                "'y': '÷ value at r = 0'}, 'decay')",
            ),
        ),
        fix_rope,
    ),
    "masking": Recipe(
        "masking",
        ("lmask",),
        masking_setup,
        lambda v: (
            Figure("masking_weights", 'matrix_figure(check.drawn_weights.numpy(), tokens, tokens, kind="prob")'),
        ),
    ),
    "cost": Recipe(
        "cost",
        ("lcost",),
        cost_setup,
        lambda v: (Figure("cost_rnn", "rnn_figure(max(rnn_t * 4, 64), rnn_t, names, rnn_d)"),),
    ),
    "benchmark": Recipe(
        "benchmark",
        ("bench",),
        bench_setup,
        lambda v: (
            Figure("bench_time", "time_figure(rows, 'time', 'T', 'ms')"),
            Figure("bench_memory", "memory_figure(rows, 'memory', 'T', 'bytes')"),
            Figure("bench_tflops", "tflops_figure(rows, 'throughput', 'T', 'TFLOP/s', doc['env'].get('peak_tflops'))"),
        ),
        bench_fix,
    ),
    "tiled": Recipe(
        "tiled",
        ("tiled",),
        tiled_setup,
        lambda v: (
            Figure(
                "tiled_output",
                "grid_figure([trace.output.numpy(), full.output.numpy()], ['tiled', 'full'], qs, dim_labels(d))",
            ),
        ),
    ),
}
