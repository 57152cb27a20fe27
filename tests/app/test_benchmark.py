"""The Benchmark page through AppTest: both languages, a tiny real run, the memory cap, bad URL values,
recorded GPU results from a fixture file and with none."""

from __future__ import annotations

import json
import threading

import pytest
from streamlit.testing.v1 import AppTest

import attnlab.bench.results as recorded
from attnlab.bench import MEMORY_CAP_BYTES, estimated_peak_bytes, format_bytes
from attnlab.limits import LIVE_BENCH_BUDGET_S
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.benchmark.live import BENCH
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, finish_run, one_session_per_run, open_page, texts

PAGE = "views/benchmark.py"
TINY = dict(seq="16,32", heads="1", head_dim="8", impls="explicit,tiled,sdpa")
CAP = format_bytes(MEMORY_CAP_BYTES)


runner_forgotten = one_session_per_run(BENCH)


@pytest.fixture(autouse=True)
def no_recordings(tmp_path, monkeypatch):
    """Every test starts with an empty results folder (so files committed later do not change them)."""
    folder = tmp_path / "gpu"
    folder.mkdir()
    monkeypatch.setattr(recorded, "DEFAULT_RESULTS_DIR", folder)
    return folder


def visit(**query: str) -> AppTest:
    """A visitor of this page's URL with `query`."""
    return open_page(PAGE, **query)


def run_button(at: AppTest, lang: str):
    label = catalog(lang)["benchmark.run"]
    return next(b for b in at.button if b.label == label)


def test_before_a_run_the_page_shows_device_settings_and_no_recordings(lang):
    at = visit(lang=lang)
    assert_clean(at)
    cat = catalog(lang)
    assert at.title[0].value == cat["benchmark.title"]
    infos = texts(at, "info")
    assert any("AMD" in i or "CPU" in i or "Intel" in i for i in infos[:1])  # the device line names the CPU
    assert cat["benchmark.no_recorded"] in infos  # said plainly, with the command to record some
    assert any("python -m attnlab.bench --preset record" in c.value for c in at.code)
    assert not at.get("plotly_chart") and not at.dataframe  # nothing measured, nothing drawn
    assert cat["benchmark.not_run_yet"] in [c.value for c in at.caption]
    assert dict(at.query_params) == {
        "dtype": "float32",
        "heads": "4",
        "head_dim": "64",
        "batch": "1",
        "causal": "false",
        "impls": "explicit,tiled,sdpa,sdpa-math,sdpa-flash",
        "seq": "64,128,256,512",
        "mask": "full",
        "window": "128",
        "docs": "4",
        "kv_heads": "4",  # every head its own keys and values, unless asked
        "open": "",  # a recorded file's charts and studies: folded until opened
        "lang": lang,
        "palette": "default",
    }


def test_a_tiny_run_draws_measured_numbers_and_survives_reruns(lang):
    at = visit(lang=lang, **{**TINY, "impls": "explicit,tiled,sdpa,sdpa-efficient"})
    run_button(at, lang).click().run()
    assert BENCH.snapshot().owner and run_button(at, lang).disabled  # the server's one run is this session's
    finish_run(at, BENCH)
    assert_clean(at)
    doc = at.session_state["_bench.last_run"]
    rows = doc["results"]
    assert [(r["impl"], r["seq_len"]) for r in rows] == [
        (i, t) for t in (16, 32) for i in ("explicit", "tiled", "sdpa", "sdpa-efficient")
    ]
    assert doc["env"]["cpu_threads"] == 1 and doc["env"]["config"]["heads"] == 1
    load = doc["env"]["machine_load"]  # how busy the machine was otherwise, said beside the run
    key = "benchmark.load_busy" if load["busy"] else "benchmark.load_quiet"
    said = catalog(lang)[key].format(
        other=f"{load['other_busy_cores']:.1f}", cores=load["cores"], load=f"{load['load_1m_after']:.1f}"
    )
    assert said in texts(at, "caption")
    figs = figures(at)
    assert len(figs) == 3  # time, memory, TFLOP/s
    time_fig = {tr["name"].split(" (")[0]: tr for tr in figs[0]["data"]}
    assert sorted(time_fig) == ["explicit", "sdpa", "tiled"]  # the unsupported kernel draws nothing
    for r in rows:
        if r["status"] == "ok":
            tr = time_fig[r["impl"]]
            assert _decode(tr["y"])[list(_decode(tr["x"])).index(r["seq_len"])] == pytest.approx(r["median_ms"])
    # sdpa-efficient has no CPU kernel: said as information with PyTorch's reason, not as an error
    assert not texts(at, "error")
    notes = [i for i in texts(at, "info") if "sdpa-efficient" in i]
    assert len(notes) == 1 and "16, 32" in notes[0]
    table = at.dataframe[0].value
    assert len(table) == 8 and table.iloc[3, -1].startswith("unsupported: ")
    assert [b.proto.label for b in at.get("download_button")] == [
        catalog(lang)["benchmark.download_csv"],
        catalog(lang)["benchmark.download_json"],
        catalog(lang)["takeout.download"],  # the sidebar's notebook, on every page with figures
    ]
    # a widget change reruns the page but not the benchmark: the same measured rows stay on screen
    at.selectbox(key="bench.mask").set_value("causal").run()
    assert at.session_state["_bench.last_run"] is doc
    assert (
        len(at.get("plotly_chart")) == 3 and at.query_params["causal"] == "true" and at.query_params["mask"] == "causal"
    )
    assert catalog(lang)["benchmark.modern_none_live"] in texts(at, "caption")  # no window, one K/V count: no study


def test_a_second_visitor_is_told_a_run_is_going_and_keeps_their_settings(lang):
    gate = threading.Event()

    def slow():
        gate.wait()
        yield 1, {}

    assert BENCH.start("someone else", 10, slow)
    try:
        at = visit(lang=lang, **TINY)
        cat = catalog(lang)
        assert cat["benchmark.busy_now"].split("{")[0] in " ".join(texts(at, "info"))  # said before they press Run
        before = dict(at.query_params)
        run_button(at, lang).click().run()
        assert_clean(at)
        warning = " ".join(texts(at, "warning"))
        assert cat["benchmark.busy"].split("{")[0] in warning
        budget = round(LIVE_BENCH_BUDGET_S)  # nothing measured yet: the budget's remainder, said in whole seconds
        assert any(
            cat["benchmark.busy"].format(seconds=s, budget=budget) == warning for s in range(budget - 60, budget + 1)
        )
        assert dict(at.query_params) == before and at.multiselect(key="bench.impls").value == [
            "explicit",
            "tiled",
            "sdpa",
        ]
        assert BENCH.snapshot().owner == "someone else" and "_bench.last_run" not in at.session_state
    finally:
        gate.set()
        while BENCH.snapshot().running:
            threading.Event().wait(0.01)


def test_a_sweep_that_fails_says_why_once_it_has_ended(lang):
    def failing():
        yield from ()  # fails before its first row
        raise RuntimeError("[out of memory](http://x)")

    at = visit(lang=lang, **TINY)
    assert BENCH.start("test session id", 5, failing)  # the id AppTest gives every session
    finish_run(at, BENCH)
    assert_clean(at)
    assert catalog(lang)["benchmark.run_failed"] in texts(at, "error")
    assert any("`[out of memory](http://x)`" in c for c in texts(at, "caption"))  # PyTorch's words as code
    assert BENCH.take("test session id") is None  # collected by the page, once


def test_sizes_past_the_memory_cap_are_refused_naming_the_cap(lang):
    at = visit(lang=lang, seq="64,16384", heads="8", dtype="float32")
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 1 and "16384" in warnings[0] and CAP in warnings[0]
    assert "8.0 GiB" in warnings[0]  # 8 x 16384^2 float32 = 8 GiB for one matrix
    assert not run_button(at, lang).disabled  # T = 64 still runs
    at = visit(lang=lang, seq="8192,16384", heads="8")
    assert len(texts(at, "warning")) == 2 and run_button(at, lang).disabled
    assert catalog(lang)["benchmark.all_refused"] in texts(at, "info")


def test_the_cap_counts_what_each_implementation_holds():
    # T=4096, H=2, float32: one matrix is 128 MiB; explicit keeps about 9 of them, sdpa only O(T)
    at = visit(seq="4096", heads="2", impls="explicit,sdpa")
    warning = texts(at, "warning")[0]
    need = format_bytes(estimated_peak_bytes(1, 2, 4096, "float32", ("explicit", "sdpa"), head_dim=64))
    assert "128.0 MiB" in warning and need in warning and CAP in warning
    at = visit(seq="4096", heads="2", impls="tiled,sdpa")
    assert not texts(at, "warning")


def test_bad_url_values_are_named_and_replaced(lang):
    query = dict(
        heads="zero", head_dim="-3", batch="99", causal="maybe", dtype="float8", impls="tiled,bogus", seq="16,100"
    )
    at = visit(lang=lang, **query)
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 7
    for name, value in query.items():
        assert any(f"{name}={value}" in w for w in warnings), name
    assert {k: at.query_params[k] for k in query} == dict(
        heads="4", head_dim="1", batch="16", causal="false", dtype="float32", impls="tiled", seq="16"
    )
    assert at.multiselect(key="bench.impls").value == ["tiled"]


def test_recorded_results_are_drawn_with_their_label(no_recordings, lang):
    rows = []
    for t, (ms, mem) in {1024: (0.05, 2_000_000), 2048: (0.15, 4_000_000)}.items():
        for impl, scale in (("sdpa-flash", 1.0), ("explicit", 6.0)):
            flops = 4 * 16 * t * t * 64
            med = ms * scale
            rows.append(
                dict(
                    impl=impl,
                    device="cuda",
                    dtype="float16",
                    batch=1,
                    heads=16,
                    seq_len=t,
                    head_dim=64,
                    causal=False,
                    median_ms=med,
                    p20_ms=med * 0.98,
                    p80_ms=med * 1.02,
                    tflops=flops / (med * 1e-3) / 1e12,
                    peak_mem_bytes=int(mem * scale),
                    max_abs_err=1e-3,
                    status="ok",
                )
            )
    rows.append(
        {
            **rows[0],
            "impl": "sdpa-cudnn",
            "median_ms": None,
            "p20_ms": None,
            "p80_ms": None,
            "tflops": None,
            "peak_mem_bytes": None,
            "max_abs_err": None,
            "status": "unsupported: no cuDNN",
        }
    )
    env = {
        "torch": "2.5.1+cu124",
        "device_name": "NVIDIA H100 80GB HBM3",
        "date": "2025-01-02T03:04:05+00:00",
        "cuda": "12.4",
        "peak_tflops": {"float16": 989.4},
    }
    (no_recordings / "h100-d64.json").write_text(json.dumps({"env": env, "results": rows}))
    (no_recordings / "broken.json").write_text("{not json")
    at = visit(lang=lang, open="grid")  # the recorded file's charts and table, opened
    assert_clean(at)
    label = "NVIDIA H100 80GB HBM3 · torch 2.5.1+cu124 · 2025-01-02"
    assert any(label in m.value.replace("\\", "") for m in at.markdown)
    assert any("CUDA `12.4`" in c.value for c in at.caption)
    assert catalog(lang)["benchmark.no_recorded"] not in texts(at, "info")
    assert catalog(lang)["benchmark.recorded_skipped"] in texts(at, "warning")
    why = catalog(lang)["bench_errors.not_json"]
    assert any("`broken.json`" in c and why in c for c in texts(at, "caption"))  # which file and why, translated
    figs = figures(at)
    assert len(figs) == 3
    flash = next(tr for tr in figs[0]["data"] if tr["name"].startswith("sdpa-flash"))
    assert list(_decode(flash["y"])) == pytest.approx([0.05, 0.15])  # exactly the recorded numbers
    said = [i for i in texts(at, "info") if "sdpa-cudnn" in i]  # PyTorch's own sentence, inert, in one line
    assert said == [catalog(lang)["benchmark.unsupported_why"].format(
        impl="sdpa-cudnn", dtype="float16", lengths="1024", why=catalog(lang)["benchmark.reason_other"].format(
            text="`no cuDNN`"))]  # fmt: skip
    full = catalog(lang)["benchmark.pytorch_said"].format(impl="sdpa-cudnn")
    assert [e.label for e in at.expander if e.label == full] == [full]  # the whole text, behind a disclosure
    table = at.dataframe[0].value
    assert len(table) == 5 and catalog(lang)["benchmark.col_share"] in table.columns  # share of a known peak
    assert at.query_params["rec"] == "h100-d64" and at.query_params["rdtype"] == "float16"
