"""The Benchmark page's results upload (contract 11): a good file drawn beside the recorded and live runs, labelled;
hostile files refused in the user's language with the page's settings kept; a device name shown only as text."""

from __future__ import annotations

import json
import re

import pytest

import attnlab.bench.results as recorded
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.benchmark.live import BENCH
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, finish_run, one_session_per_run, open_page, texts

PAGE = "views/benchmark.py"
MIME = "application/json"
ENV = {"torch": "2.13.0+cu128", "device_name": "NVIDIA H100 80GB HBM3", "date": "2026-11-25T09:00:00+00:00",
       "cuda": "12.8", "device": "cuda", "peak_tflops": {"bfloat16": 989.4, "float16": 989.4},
       "preset": {"name": "record", "dry_run": False}, "timer_check": {"ratio": 1.013}}  # fmt: skip
SETTINGS = dict(heads="2", head_dim="32", seq="64,128", impls="tiled,sdpa", dtype="float16", causal="true")


runner_forgotten = one_session_per_run(BENCH)


def row(impl: str, t: int, ms: float, dtype: str = "bfloat16", head_dim: int = 128, causal: bool = False) -> dict:
    """One measured row of a 16-head run, its TFLOP/s computed from its time."""
    flops = 4 * 2 * (2048 // head_dim) * t * t * head_dim / (2 if causal else 1)
    return dict(impl=impl, device="cuda", dtype=dtype, batch=2, heads=2048 // head_dim, seq_len=t, head_dim=head_dim,
                causal=causal, median_ms=ms, p20_ms=ms * 0.99, p80_ms=ms * 1.01, tflops=flops / (ms * 1e-3) / 1e12,
                peak_mem_bytes=t * 4096, max_abs_err=2e-3, status="ok")  # fmt: skip


ROWS = [row("sdpa", 4096, 0.40), row("sdpa", 8192, 1.45), row("explicit", 4096, 3.0), row("explicit", 8192, 12.0)]
ROWS += [row("sdpa", 4096, 0.3, head_dim=64), row("sdpa", 8192, 1.1, head_dim=64)]
GOOD = json.dumps({"env": ENV, "results": ROWS}).encode()


@pytest.fixture(autouse=True)
def folder(tmp_path, monkeypatch):
    """An empty data/gpu/ for every test."""
    path = tmp_path / "gpu"
    path.mkdir()
    monkeypatch.setattr(recorded, "DEFAULT_RESULTS_DIR", path)
    return path


def upload(at, name: str, data: bytes):
    """Give the page's uploader one file and rerun."""
    at.file_uploader(key="bench.up.file").set_value((name, data, MIME))
    return at.run()


def test_a_good_file_is_drawn_with_its_label_and_beside_the_recorded_run(folder, lang):
    other = {**ENV, "device_name": "NVIDIA A100-SXM4-80GB", "peak_tflops": {"bfloat16": 312.0}}
    (folder / "a100.json").write_text(json.dumps({"env": other, "results": [row("sdpa", 4096, 1.2)]}))
    at = upload(open_page(PAGE, lang=lang, open="grid", **SETTINGS), "h100.json", GOOD)
    assert_clean(at)
    cat = catalog(lang)
    assert not texts(at, "error")
    label = "NVIDIA H100 80GB HBM3 · torch 2.13.0+cu128 · 2026-11-25"
    assert any(f"`{label}`" in m.value for m in at.markdown)  # device, torch and date, as inert text
    assert any("`h100.json`" in c and "`12.8`" in c for c in texts(at, "caption"))
    assert cat["benchmark.timer_ratio"].format(ratio="1.013") in texts(at, "caption")
    figs = {f["layout"]["title"]["text"]: f for f in figures(at)}
    tflops = figs[cat["benchmark.compare_tflops"]]
    names = [tr["name"].replace("<br>", " · ") for tr in tflops["data"]]  # long names wrap in the legend
    assert names == [
        f"{cat['benchmark.source_upload']} · {label}",
        "NVIDIA A100-SXM4-80GB · torch 2.13.0+cu128 · 2026-11-25",
    ]
    want = row("sdpa", 8192, 1.45)["tflops"]
    assert list(_decode(tflops["data"][0]["y"]))[1] == pytest.approx(want)  # the file's own number
    share = figs[cat["benchmark.compare_share"]]
    assert list(_decode(share["data"][0]["y"]))[1] == pytest.approx(100 * want / 989.4)  # of the H100's peak
    assert list(_decode(share["data"][1]["y"])) == pytest.approx([100 * row("sdpa", 4096, 1.2)["tflops"] / 312.0])
    own = [f for f in figures(at) if f["layout"]["title"]["text"] == cat["benchmark.time_title"]]
    assert len(own) == 2  # the recorded run's charts and the uploaded file's
    upload_time = {tr["name"].split(" (")[0] for tr in own[1]["data"]}
    assert upload_time == {"explicit", "sdpa"}  # one slice of the file (head size 128 first, the headline's)
    at.selectbox(key="bench.up.head_dim").set_value(64).run()
    own = [f for f in figures(at) if f["layout"]["title"]["text"] == cat["benchmark.time_title"]]
    assert {tr["name"].split(" (")[0] for tr in own[1]["data"]} == {"sdpa"}  # only sdpa was measured at 64
    assert dict(at.query_params) | SETTINGS == dict(at.query_params)  # the page's own settings stay as they were


def test_the_live_run_joins_the_comparison(lang):
    at = open_page(PAGE, lang=lang, seq="16,32", heads="1", head_dim="8", impls="sdpa")
    next(b for b in at.button if b.label == catalog(lang)["benchmark.run"]).click().run()
    finish_run(at, BENCH)
    assert at.session_state["_bench.last_run"]["results"][0]["status"] == "ok"
    cpu_rows = [dict(r, dtype="float32", device="cuda") for r in (row("sdpa", 16, 0.01), row("sdpa", 32, 0.02))]
    data = json.dumps({"env": ENV, "results": [{**r, "head_dim": 8, "heads": 1, "batch": 1} for r in cpu_rows]})
    at = upload(at, "tiny.json", data.encode())
    assert_clean(at)
    cat = catalog(lang)
    tflops = next(f for f in figures(at) if f["layout"]["title"]["text"] == cat["benchmark.compare_tflops"])
    names = [tr["name"].replace("<br>", " · ") for tr in tflops["data"]]  # long names wrap in the legend
    assert len(names) == 2 and names[1].startswith(cat["benchmark.source_live"])
    assert cat["benchmark.compare_no_peak"].format(dtype="float32") in texts(at, "caption")


HOSTILE = {
    "not json": (b"{nope", "not_json"),
    "pickle": (b"\x80\x04\x95\x00", "pickle"),
    "nan time": (GOOD.replace(b'"median_ms": 0.4,', b'"median_ms": NaN,'), "row_not_finite"),
    "negative time": (GOOD.replace(b'"median_ms": 0.4,', b'"median_ms": -0.4,'), "row_negative"),
    "nested": (b"[" * 5000 + b"]" * 5000, "too_deep"),
    "too big": (b" " * (3 * 2**20), "too_big"),
    "wrong type": (GOOD.replace(b'"seq_len": 4096', b'"seq_len": "4096"', 1), "row_size"),
    "no env": (json.dumps({"results": ROWS}).encode(), "no_env"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_files_are_refused_in_the_users_language_and_the_settings_stay(kind, lang):
    data, reason = HOSTILE[kind]
    name = "[click](http://evil.example) <b>x</b>.json"
    at = open_page(PAGE, lang=lang, **SETTINGS)
    before = dict(at.query_params)
    at = upload(at, name, data)
    assert_clean(at)
    errors = texts(at, "error")
    assert len(errors) == 1
    cat = catalog(lang)
    head, _, tail = cat["benchmark.upload_refused"].partition("{name}")
    assert errors[0].startswith(head) and "`[click](http://evil.example) <b>x</b>.json`" in errors[0]
    sentence = cat[f"bench_errors.{reason}"]
    assert sentence.split("{")[0] in errors[0]  # the reason, in this language
    assert "Traceback" not in errors[0] and not at.get("plotly_chart")
    assert dict(at.query_params) == before and at.number_input(key="bench.heads").value == 2


def test_a_device_name_carrying_html_and_markdown_is_shown_as_text():
    name = "<img src=x onerror=alert(1)> **bold** [link](http://evil.example)"
    data = json.dumps({"env": {**ENV, "device_name": name}, "results": ROWS}).encode()
    at = upload(open_page(PAGE), "evil.json", data)
    assert_clean(at)
    shown = [m.value for m in at.markdown if "onerror" in m.value]
    assert f"##### `{name} · torch 2.13.0+cu128 · 2026-11-25`" in shown  # one code span: inert
    assert len(shown) == 2 and f"`{name}`" in shown[0]  # the headline names the device inside a code span too
    assert not any("onerror" in re.sub(r"`[^`]*`", "", m.value) for m in at.markdown)  # only ever in a code span
