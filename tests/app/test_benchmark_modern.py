"""The Benchmark page's long-context parts (contract 15) through AppTest: a live window-and-grouped-heads run drawn
from its own rows (FlexAttention's compile mocked: none runs in the suite), the two study presets within the live
caps, a recorded file's studies from its numbers, a file without them said plainly, and hostile link values."""

from __future__ import annotations

import json

import pytest

import attnlab.bench.results as recorded
from attnlab.bench import MEMORY_CAP_BYTES, estimated_peak_bytes, kv_bytes, window_studies
from attnlab.bench import flex as flexmod
from attnlab.bench.row import ResultRow
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.benchmark import sections
from attnlab.ui.pages.benchmark.live import BENCH
from attnlab.ui.pages.benchmark.modern import KV_STUDY, WINDOW_STUDY
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, finish_run, one_session_per_run, open_page, texts

PAGE = "views/benchmark.py"
LIVE = dict(heads="2", head_dim="8", mask="window", window="4", kv_heads="1,2", impls="sdpa,flex", seq="16,32")

runner_forgotten = one_session_per_run(BENCH)


@pytest.fixture(autouse=True)
def folder(tmp_path, monkeypatch):
    """An empty results folder, quick timing, and a machine with no C++ compiler: nothing compiles in the suite."""
    monkeypatch.setattr(recorded, "DEFAULT_RESULTS_DIR", tmp_path)
    monkeypatch.setattr(sections, "TIMING", dict(warmup=0, min_reps=1, max_reps=2, min_time_s=0.0, max_time_s=0.01))
    monkeypatch.setattr(flexmod.shutil, "which", lambda name: None)
    monkeypatch.setattr(flexmod, "compile_flex", lambda: pytest.fail("torch.compile must not run in the suite"))
    return tmp_path


def by_name(fig: dict) -> dict[str, dict]:
    return {tr["name"].split(" (")[0]: tr for tr in fig["data"]}


def test_a_live_window_and_grouped_heads_run_draws_both_studies_from_its_rows(lang):
    at = open_page(PAGE, lang=lang, **LIVE)
    label = catalog(lang)["benchmark.run"]
    next(b for b in at.button if b.label == label).click().run()
    finish_run(at, BENCH)
    assert_clean(at)
    rows = [ResultRow.from_dict(r) for r in at.session_state["_bench.last_run"]["results"]]
    assert {(r.impl, r.kv_heads, r.seq_len, r.mask) for r in rows} == {
        (i, kv, t, "window:4") for i in ("sdpa", "flex") for kv in (1, 2) for t in (16, 32)
    }
    assert all(r.ok for r in rows) and {r.mode for r in rows if r.impl == "flex"} == {
        "eager: no C++ compiler (g++ is not on PATH), so torch.compile cannot build FlexAttention's CPU kernel"
    }
    cat = catalog(lang)
    assert any("g++ is not on PATH" in c for c in texts(at, "caption"))  # the page says why FlexAttention ran eager
    figs = figures(at)  # time, memory, TFLOP/s; then the window study, then time and K/V bytes against K/V heads
    assert len(figs) == 6
    window = by_name(figs[3])
    study = window_studies(rows)[-1]  # the study the page shows first: the last (kv = 2)
    flex_name = cat["benchmark.flex_name"].format(mode="eager")  # the legend says eager; the reason is said apart
    assert list(_decode(window[flex_name.split(" (")[0]]["y"])) == pytest.approx([r.median_ms for r in study.flex])
    crossing = figs[3]["layout"].get("shapes", [])
    assert bool(crossing) == (study.crossing is not None)  # the dashed line marks the crossing only where there is one
    kv_time = by_name(figs[4])
    assert set(kv_time) == {"sdpa", "flex"} and list(_decode(kv_time["sdpa"]["x"])) == [1, 2]
    bars = figs[5]["data"][0]
    t32 = next(r for r in rows if r.seq_len == 32 and r.kv_heads == 1)  # the page shows the longest T first
    assert list(_decode(bars["y"])) == [kv_bytes(t32), 2 * kv_bytes(t32)]


def test_the_study_buttons_set_up_runs_the_live_caps_allow(lang):
    at = open_page(PAGE, lang=lang)
    cat = catalog(lang)
    next(b for b in at.button if b.label == cat["benchmark.study_window"]).click().run()
    assert_clean(at)
    q = at.query_params
    assert (q["mask"], q["window"], q["impls"], q["kv_heads"]) == ("window", "128", "sdpa,flex", "4")
    assert q["seq"] == "256,512,1024,2048" and not texts(at, "warning")  # nothing refused by the memory cap
    next(b for b in at.button if b.label == cat["benchmark.study_kv"]).click().run()
    q = at.query_params
    assert (q["kv_heads"], q["heads"], q["mask"], q["seq"]) == ("1,2,4", "4", "causal", "1024")
    for study in (WINDOW_STUDY, KV_STUDY):
        rule = f"window:{study['window']}" if study["mask"] == "window" else study["mask"]
        for t in study["seq"]:
            for kv in study["kv_heads"]:
                need = estimated_peak_bytes(1, study["heads"], t, "float32", tuple(study["impls"]), 64, kv_heads=kv,
                                            mask=rule)  # fmt: skip
                assert need <= MEMORY_CAP_BYTES


def rec_row(impl: str, t: int, ms: float, mask: str = "causal", kv: int = 16, mode: str | None = None) -> dict:
    """A measured bf16 row of a 16-head, d = 128 run."""
    rule_flops = 4 * 2 * 16 * 128 * (t * t / 2 if mask == "causal" else t * 4096 - 4096 * 4095 / 2)
    return dict(impl=impl, device="cuda", dtype="bfloat16", batch=2, heads=16, seq_len=t, head_dim=128,
                causal=mask == "causal", median_ms=ms, p20_ms=ms * 0.99, p80_ms=ms * 1.01,
                tflops=rule_flops / (ms * 1e-3) / 1e12, peak_mem_bytes=t * 8192, max_abs_err=4e-3, status="ok",
                kv_heads=kv, mask=mask, mode=mode)  # fmt: skip


def test_a_recorded_file_shows_its_studies_and_one_without_says_so(folder, lang):
    rows = [
        rec_row("flex", t, ms, "window:4096", mode="compiled") for t, ms in ((4096, 2.0), (8192, 4.2), (16384, 8.8))
    ]
    rows += [rec_row("sdpa", t, ms, "window:4096") for t, ms in ((4096, 1.5), (8192, 5.9), (16384, 23.0))]
    kv_rows = (("sdpa", 16, 2.9), ("sdpa", 2, 2.8), ("flex", 16, 3.4), ("flex", 2, 3.3))
    rows += [rec_row(i, 8192, ms, kv=kv, mode="compiled" if i == "flex" else None) for i, kv, ms in kv_rows]
    env = {"torch": "2.13.0+cu128", "device_name": "NVIDIA H100 80GB HBM3", "date": "2026-11-25T09:00:00+00:00"}
    (folder / "h100.json").write_text(json.dumps({"env": env, "results": rows}))
    at = open_page(PAGE, lang=lang, rdtype="bfloat16", open="studies")
    assert_clean(at)
    figs = figures(at)
    window = next(f for f in figs if len(f["data"]) == 2 and "shapes" in f["layout"])
    assert list(_decode(window["data"][1]["y"])) == pytest.approx([1.5, 5.9, 23.0])  # exactly the recorded numbers
    x = window["layout"]["shapes"][0]["x0"]
    assert 4096 < x < 8192  # flex passes sdpa between 4k and 8k
    cat = catalog(lang)
    assert any(cat["benchmark.window_cross"].split("{")[0] in c for c in texts(at, "caption"))
    kv_time = next(f for f in figs if f["layout"]["xaxis"].get("ticktext") == ["2", "16"])
    assert set(by_name(kv_time)) == {"sdpa", "flex"}
    (folder / "h100.json").write_text(json.dumps({"env": env, "results": [rec_row("sdpa", 8192, 2.9)]}))
    at = open_page(PAGE, lang=lang, open="studies")
    assert cat["benchmark.modern_none_file"] in texts(at, "info")  # older recordings: said plainly, nothing drawn


def test_link_values_for_masks_and_key_value_heads_are_read_or_replaced_and_said(lang):
    at = open_page(PAGE, lang=lang, causal="true", heads="4", kv_heads="3,2")
    assert_clean(at)
    q = at.query_params
    assert (q["mask"], q["causal"], q["kv_heads"]) == ("causal", "true", "2")  # an older link's causal=true is a mask
    assert any("kv_heads=3,2" in w for w in texts(at, "warning"))
    at = open_page(PAGE, lang=lang, causal="true", mask="window", window="0", kv_heads="zero", docs="3")
    assert_clean(at)
    warnings = " ".join(texts(at, "warning"))
    for asked in ("causal=true", "window=0", "kv_heads=zero", "docs=3"):
        assert asked in warnings, asked
    q = at.query_params
    assert (q["mask"], q["causal"], q["window"], q["kv_heads"], q["docs"]) == ("window", "false", "1", "4", "4")
