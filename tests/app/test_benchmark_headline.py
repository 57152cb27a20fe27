"""The Benchmark page with the committed GPU record (data/gpu/h200.json): its headline first, before any Run, with the
numbers the file holds (computed here from the JSON, not by the page's code); the grid one slice at a time, a line per
implementation; the unsupported rows' reasons in one sentence; an upload's headline beside the record's."""

from __future__ import annotations

import json

import pytest

from attnlab.bench.results import DEFAULT_RESULTS_DIR
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.benchmark.live import BENCH
from tests.app.charts import figures
from tests.app.conftest import assert_clean, one_session_per_run, open_page, texts

PAGE = "views/benchmark.py"
SDPA = ("sdpa", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn")
RAW = json.loads((DEFAULT_RESULTS_DIR / "h200.json").read_text())

runner_forgotten = one_session_per_run(BENCH)


def fastest(doc: dict, lang: str) -> str:
    """The headline's first sentence: the fastest SDPA row without a mask, found here in the JSON rows by hand."""
    rows, peak = doc["results"], doc["env"]["peak_tflops"]["bfloat16"]
    best = max(
        (r for r in rows if (r["status"], r["dtype"], r["head_dim"], r["mask"]) == ("ok", "bfloat16", 128, "full")
         and r["kv_heads"] == r["heads"] and r["impl"] in SDPA),
        key=lambda r: r["tflops"],
    )  # fmt: skip
    return catalog(lang)["benchmark.head_fastest"].format(
        device=f"`{doc['env']['device_name']}`", impl=best["impl"], tflops=f"{best['tflops']:.0f}",
        t=best["seq_len"], share=f"{best['tflops'] / peak:.0%}", peak=f"{peak:.0f}", dtype="bfloat16")  # fmt: skip


def expected(doc: dict, lang: str) -> list[str]:
    """The headline's sentences, each number taken from the JSON rows by hand and formatted as the page writes it."""
    cat, rows = catalog(lang), doc["results"]
    plain = [r for r in rows if r["status"] == "ok" and (r["dtype"], r["head_dim"]) == ("bfloat16", 128)]
    plain = [r for r in plain if r["kv_heads"] == r["heads"]]
    full = {(r["impl"], r["seq_len"]): r["median_ms"] for r in plain if r["mask"] == "full"}
    t = max(t for (i, t) in full if i == "explicit" and ("sdpa", t) in full)
    win = {(r["impl"], r["seq_len"]): r for r in rows if r["status"] == "ok" and r["mask"].startswith("window:")}
    w = max(t for (i, t) in win if i == "flex" and ("sdpa", t) in win)
    flex, sdpa = win["flex", w]["median_ms"], win["sdpa", w]["median_ms"]
    return [
        fastest(doc, lang),
        cat["benchmark.head_explicit"].format(
            ratio=f"{full['explicit', t] / full['sdpa', t]:.1f}", t=t, ms=f"{full['explicit', t]:.3g}",
            sdpa_ms=f"{full['sdpa', t]:.3g}"),
        cat["benchmark.head_window_flex"].format(
            window=int(win["flex", w]["mask"].split(":")[1]), t=w, flex_ms=f"{flex:.3g}", sdpa_ms=f"{sdpa:.3g}",
            ratio=f"{sdpa / flex:.1f}", impl="sdpa"),
    ]  # fmt: skip


def test_the_page_opens_on_the_records_headline_with_its_numbers(lang):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    said = " ".join(sentences := expected(RAW, lang))
    assert said in [m.value for m in at.markdown]  # the three sentences, one paragraph
    assert "650" in sentences[0] and "66%" in sentences[0] and "19.9" in sentences[1] and "5.1" in sentences[2]
    head = figures(at)[0]  # the first chart on the page, drawn before anyone pressed Run
    assert head["layout"]["title"]["text"] == "NVIDIA H200" and "_bench.last_run" not in at.session_state
    assert [s["y0"] for s in head["layout"]["shapes"]] == [989.4, 989.4]  # the device's peak in both panels
    assert len(figures(at)) == 1 and at.query_params["open"] == ""  # the grid and the studies: folded (issue 61)
    at.session_state["bench.open.grid"] = True  # opened
    at.run()
    assert at.query_params["open"] == "grid"
    time = next(f for f in figures(at) if f["layout"]["title"]["text"] == catalog(lang)["benchmark.time_title"])
    names = [tr["name"].split(" (")[0] for tr in time["data"]]
    assert len(names) == len(set(names)) == 7  # the recorded grid, one slice: a line per implementation


def test_the_records_float32_rows_say_why_in_one_sentence_with_pytorchs_text_behind_a_disclosure():
    at = open_page(PAGE, lang="en", rdtype="float32", open="grid")
    assert_clean(at)
    infos = [i for i in texts(at, "info") if "did not run" in i]
    assert infos == [
        "**sdpa-flash** did not run for float32 (T = 512, 1024, 2048, 4096, 8192, 16384): "
        "Flash attention needs float16 or bfloat16 (got float32).",
        "**sdpa-cudnn** did not run for float32 (T = 512, 1024, 2048, 4096, 8192, 16384): "
        "cuDNN attention's own reason was cut off when this file was written (PyTorch's first words are below).",
    ]
    assert [e.label for e in at.expander if "in full" in e.label] == [
        "What PyTorch said about sdpa-flash, in full",
        "What PyTorch said about sdpa-cudnn, in full",
    ]
    assert any("Triggered internally" in c.value for c in at.code)  # PyTorch's whole text is still there
    status = at.dataframe[0].value.iloc[:, -1]
    assert not status.str.contains("Triggered").any() and status.str.startswith("unsupported: ").sum() == 12


@pytest.mark.parametrize("lang", ["zh"])
def test_an_uploaded_file_stands_beside_the_records_headline(lang):
    rows = [r for r in RAW["results"] if r["dtype"] == "bfloat16" and r["head_dim"] == 128][:40]
    env = {**RAW["env"], "device_name": "NVIDIA H100 80GB HBM3", "date": "2026-11-28T10:00:00+00:00"}
    doc = {"env": env, "results": [{**r, "tflops": r["tflops"] and r["tflops"] / 2} for r in rows]}
    at = open_page(PAGE, lang=lang)
    at.file_uploader(key="bench.up.file").set_value(("h100.json", json.dumps(doc).encode(), "application/json"))
    at.run()
    assert_clean(at)
    heads = figures(at)[:2]
    assert [f["layout"]["title"]["text"] for f in heads] == ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
    assert heads[0]["layout"]["yaxis"]["range"] == heads[1]["layout"]["yaxis"]["range"]  # one scale, side by side
    mine = fastest(doc, lang)
    assert any(mine in m.value for m in at.markdown)  # the upload's own numbers, in its own sentences


def test_the_filters_pick_one_slice_and_keep_what_was_taken_off():
    at = open_page(PAGE, lang="en", open="grid")
    at.multiselect(key="bench.rec.impls").unselect("tiled").run()
    at.selectbox(key="bench.rec.mask").set_value("causal").run()
    assert_clean(at)
    time = next(f for f in figures(at) if f["layout"]["title"]["text"] == catalog("en")["benchmark.time_title"])
    drawn = {tr["name"].split(" (")[0] for tr in time["data"]}
    causal = {r["impl"] for r in RAW["results"] if r["status"] == "ok" and r["dtype"] == "bfloat16"
              and r["head_dim"] == 128 and r["mask"] == "causal" and r["kv_heads"] == r["heads"]}  # fmt: skip
    assert drawn == causal - {"tiled"} and "flex" in drawn  # flex, new in this slice, is drawn; tiled stays off
