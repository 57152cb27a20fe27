"""The first GPU record (data/gpu/h200.json): it loads as committed, its reasons distil to one sentence each, its
headline's numbers are the file's, and the headline's and the Benchmark charts' legends keep clear of the x axis."""

from __future__ import annotations

import json

import pytest
import torch

from attnlab.bench import BenchConfig, ResultRow
from attnlab.bench.headline import headline
from attnlab.bench.measure import measure
from attnlab.bench.reasons import distil
from attnlab.bench.results import DEFAULT_RESULTS_DIR, load_recorded
from attnlab.bench.studies import KvStudy
from attnlab.bench.sweep import build_case
from attnlab.figures.bench_headline import headline_figure
from attnlab.figures.bench_layout import AXIS_BELOW_PX, GAP_PX, NARROW_PX, entry_px, legend_px, wrap
from attnlab.figures.bench_modern import kv_time_figure

RECORD = DEFAULT_RESULTS_DIR / "h200.json"
SDPA = ("sdpa", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn")


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    """The record's rows as plain JSON, read without attnlab's reader."""
    return json.loads(RECORD.read_text())["results"]


@pytest.fixture(scope="module")
def run():
    runs, skipped = load_recorded()
    assert not skipped
    return next(r for r in runs if r.name == "h200.json")


def test_the_h200_record_loads_as_recorded(run, raw):
    assert run.label == "NVIDIA H200 · torch 2.11.0+cu130 · 2026-11-27" and run.env["cuda"] == "13.0"
    assert [r.to_dict() for r in run.results] == [{**r, "detail": None} for r in raw]  # recorded before `detail`
    statuses = [r["status"].split(":")[0] for r in raw]
    assert (statuses.count("ok"), statuses.count("unsupported"), statuses.count("oom")) == (502, 60, 20)


def test_every_reason_in_the_record_distils_to_the_forced_backends_own_sentence(raw):
    said = {}
    for r in raw:
        if r["status"].startswith("unsupported: "):
            reason = distil(r["impl"], r["status"].removeprefix("unsupported: "), r["device"])
            said.setdefault((r["impl"], r["dtype"], r["mask"], r["kv_heads"], r["heads"]), set()).add(reason.sentence)
    assert len(said) == 10  # flash and cuDNN in float32 (two head sizes, two masks), flash windowed, efficient grouped
    for (impl, dtype, mask, kv, heads), sentences in said.items():
        (sentence,) = sentences  # one sentence per implementation and setting, whatever T
        assert "Triggered" not in sentence and "/pytorch/" not in sentence and len(sentence) < 120
        if impl == "sdpa-flash" and dtype == "float32":
            assert sentence == "Flash attention needs float16 or bfloat16 (got float32)"
        elif impl == "sdpa-flash":
            assert mask.startswith("window:") and sentence == "Flash attention takes no attention mask"
        elif impl == "sdpa-efficient":
            assert kv < heads and sentence == (
                "The memory-efficient kernel needs as many key/value heads as query heads "
                f"(got {heads} query and {kv} key/value heads)"
            )
        else:  # the old 600-character cut fell before cuDNN's own words: said so, not guessed
            assert (impl, dtype) == ("sdpa-cudnn", "float32") and "cut off" in sentence


def test_a_whole_text_ending_in_pytorchs_final_error_distils_alike(raw):
    """What the CLI now keeps whole: the record's flash text uncut, then the error PyTorch raises after warning."""
    cut = next(r["status"] for r in raw if r["impl"] == "sdpa-flash" and r["dtype"] == "float32")
    whole = cut.removeprefix("unsupported: ").removesuffix("…").rsplit(" (Trigger", 1)[0]
    whole += "; cuDNN attention kernel not used because:; cuDNN attention has been runtime disabled."
    whole += "; No available kernel. Aborting execution."
    assert distil("sdpa-flash", whole, "cuda").sentence == "Flash attention needs float16 or bfloat16 (got float32)"
    assert distil("sdpa-cudnn", whole, "cuda").key == "other"  # nothing but "disabled": the first words said


def test_the_cli_writes_the_sentence_and_keeps_pytorchs_text_apart():
    config = BenchConfig(device="cpu", seq_lens=(8,), heads=2, head_dim=8, impls=("sdpa-efficient",), min_reps=1,
                         max_reps=1, min_time_s=0.0, warmup=0)  # fmt: skip
    with torch.inference_mode():
        row = measure("sdpa-efficient", build_case(torch.device("cpu"), "float32", 8, config), config, "float32")
    assert row.status == "unsupported: The memory-efficient kernel has no CPU implementation in this PyTorch"
    assert row.detail and "Triggered" not in row.status and row.full_reason == row.detail


def _headline_by_hand(raw: list[dict]) -> tuple[float, float, float]:
    """The headline's three numbers from the JSON rows, computed here without attnlab's code."""
    plain = [
        r
        for r in raw
        if r["status"] == "ok" and r["dtype"] == "bfloat16" and r["head_dim"] == 128 and r["kv_heads"] == r["heads"]
    ]
    fastest = max(r["tflops"] for r in plain if r["mask"] == "full" and r["impl"] in SDPA)
    full = {(r["impl"], r["seq_len"]): r["median_ms"] for r in plain if r["mask"] == "full"}
    t = max(t for (i, t) in full if i == "explicit" and ("sdpa", t) in full)
    window = {(r["impl"], r["seq_len"]): r["median_ms"] for r in raw if r["status"] == "ok" and "window" in r["mask"]}
    w = max(t for (i, t) in window if i == "flex" and ("sdpa", t) in window)
    return fastest, full["explicit", t] / full["sdpa", t], window["sdpa", w] / window["flex", w]


def test_the_headline_is_the_files_numbers(run, raw):
    h = headline(run.results, run.env, run.label)
    fastest, explicit, window = _headline_by_hand(raw)
    assert h.fastest.tflops == fastest and h.fastest.share == pytest.approx(fastest / 989.4)
    assert h.explicit.ratio == pytest.approx(explicit) and h.window.window == 4096
    assert 1 / h.window.ratio == pytest.approx(window) and h.window.seq_len == 16384
    assert {line.impl for line in h.lines if line.mask == "causal"} >= {"sdpa", "flex"}
    assert headline(run.results, run.env, run.label, dtype="float64") is None  # nothing measured there


def test_the_headline_figure_draws_each_implementation_once_per_panel_and_the_peak(run):
    h = headline(run.results, run.env, run.label)
    fig = headline_figure(h, "NVIDIA H200", "T", "TFLOP/s", {}, "peak 989", "of peak").to_dict()
    legend = [tr["name"] for tr in fig["data"] if tr["showlegend"]]
    assert len(legend) == len(set(legend)) == len({line.impl for line in h.lines})  # one entry per implementation
    assert {(tr["xaxis"], tr["name"]) for tr in fig["data"]} == {
        ("x" if line.mask == "full" else "x2", line.impl) for line in h.lines
    }
    assert [s["y0"] for s in fig["layout"]["shapes"]] == [989.4, 989.4]  # the peak, dashed, in both panels
    assert fig["layout"]["yaxis"]["range"][1] > 989.4
    assert [a["text"] for a in fig["layout"]["annotations"]].count("peak 989") == 2


def test_a_legend_hangs_below_the_axis_labels_at_the_plots_smallest_height(run):
    h = headline(run.results, run.env, run.label)
    fig = headline_figure(h, "NVIDIA H200", "T", "TFLOP/s", {}, "peak 989", "of peak").to_dict()
    layout = fig["layout"]
    names = [tr["name"] for tr in fig["data"] if tr["showlegend"]]
    plot = layout["height"] - layout["margin"]["t"] - legend_px(names) - 12  # on a phone, where it wraps most
    plot /= 1 - layout["legend"]["y"]
    assert -layout["legend"]["y"] * plot >= AXIS_BELOW_PX + GAP_PX - 1  # the gap holds the ticks and axis title
    assert legend_px(names, 2000) < legend_px(names)  # wider: fewer rows, a taller plot, a wider gap
    label = "uploaded · NVIDIA H100 80GB HBM3 · torch 2.13.0+cu128 · 2026-11-25"
    assert all(entry_px(line) <= NARROW_PX for line in wrap(label).split("<br>"))


def test_the_kv_heads_study_draws_time_on_a_log_axis():
    rows = {
        impl: [
            ResultRow(impl, "cuda", "bfloat16", 2, 16, 16384, 128, True, ms, ms, ms, kv_heads=kv)
            for kv, ms in ((2, base), (16, base * 1.01))
        ]
        for impl, base in (("sdpa", 3.8), ("sdpa-math", 199.0))
    }
    fig = kv_time_figure(KvStudy(rows), "t", "kv", "ms").to_dict()
    assert fig["layout"]["yaxis"]["type"] == "log"
    ticks = fig["layout"]["yaxis"]["tickvals"]
    assert min(ticks) <= 3.8 and max(ticks) >= 199.0  # both lines on the axis, fifty times apart
