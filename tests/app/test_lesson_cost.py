"""The cost lesson through AppTest: live slopes, widgets, shared links and recorded GPU results."""

from __future__ import annotations

import json

import pytest

from attnlab.lessons import cost
from attnlab.ui.app.i18n import catalog
from tests.app.charts import figures
from tests.app.conftest import assert_clean, markdown_tables, metric, open_page, texts


@pytest.fixture
def gpu_dir(tmp_path, monkeypatch):
    """An empty stand-in for data/gpu/, so the tests do not depend on which results ship with the app."""
    monkeypatch.setattr("attnlab.bench.results.DEFAULT_RESULTS_DIR", tmp_path)
    return tmp_path


def rnn_table(at) -> list[list[str]]:
    """The RNN section's table (markdown): steps, path length and work, for the RNN and for attention."""
    return [row[1:] for row in markdown_tables(at)[-1][1:]]


def test_cost_live_slopes_and_no_invented_gpu_numbers(lang, gpu_dir):
    at = open_page("views/cost.py", lang=lang)
    assert_clean(at)
    assert not at.dataframe and at.query_params["open"] == ""  # the live numbers' table: folded until opened
    at.session_state["lcost.open.table"] = True
    at.run()
    lens = cost.seq_lens(128, 2048)
    assert [int(x) for x in at.dataframe[0].value.iloc[:, 0]] == lens
    counted = [3 * t * t * 4 + t * 64 * 4 for t in lens]
    assert metric(at, lang, "lesson_cost.slope_mem") == f"{cost.loglog_slope(lens, counted):.2f}"
    times = [float(x) for x in at.dataframe[0].value.iloc[:, 1]]
    fitted = cost.loglog_slope(lens, times)  # refitted from the table's rounded times: equal to within rounding
    assert float(metric(at, lang, "lesson_cost.slope_time")) == pytest.approx(fitted, abs=0.02)  # fitted, not typed
    assert catalog(lang)["lesson_cost.gpu_none"] in texts(at, "info")
    assert len(at.get("plotly_chart")) == 3  # time, memory, RNN: no GPU chart without recorded data
    assert rnn_table(at) == [["512", "1"], ["511", "1"], ["2.68e+08", "5.37e+08"]]


def test_cost_widgets_and_shared_url(gpu_dir):
    at = open_page("views/cost.py", lang="en", t_min="2048", t_max="16", d="7", rnn_t="40", rnn_d="64", open="table")
    assert_clean(at)
    assert len(texts(at, "warning")) == 1 and "d=7" in texts(at, "warning")[0]
    assert catalog("en")["lesson_cost.swapped"] in texts(at, "info")
    assert [int(x) for x in at.dataframe[0].value.iloc[:, 0]] == [16, 32, 64, 128, 256, 512, 1024, 2048]
    assert rnn_table(at)[:2] == [["40", "1"], ["39", "1"]]
    at.number_input(key="lcost.rnn_t").set_value(1000)
    at.number_input(key="lcost.t_min").set_value(64)
    at.number_input(key="lcost.t_max").set_value(256)
    at.run()
    assert rnn_table(at)[1] == ["999", "1"]  # path length, first to last token
    assert [int(x) for x in at.dataframe[0].value.iloc[:, 0]] == [64, 128, 256]
    assert at.query_params["rnn_t"] == "1000" and at.query_params["d"] == "8"


def test_cost_shows_recorded_gpu_results_with_their_label(gpu_dir):
    rows = []
    for impl, power in (("explicit", 2), ("sdpa-flash", 1)):
        for t in (1024, 2048, 4096):
            rows.append(
                {
                    "impl": impl,
                    "device": "cuda",
                    "dtype": "float16",
                    "batch": 1,
                    "heads": 8,
                    "seq_len": t,
                    "head_dim": 64,
                    "causal": False,
                    "median_ms": 1e-6 * t**power,
                    "p20_ms": 1e-6 * t**power,
                    "p80_ms": 1e-6 * t**power,
                    "tflops": 1.0,
                    "peak_mem_bytes": 10 * t**power,
                    "max_abs_err": 0.0,
                    "status": "ok",
                }
            )
    doc = {"env": {"torch": "9.9", "device_name": "Fixture GPU", "date": "2000-01-01"}, "results": rows}
    (gpu_dir / "fixture.json").write_text(json.dumps(doc))
    (gpu_dir / "broken.json").write_text("{not json")
    at = open_page("views/cost.py", lang="en")
    assert_clean(at)
    assert catalog("en")["lesson_cost.gpu_skipped"] in texts(at, "warning")
    assert any("`broken.json:" in c for c in texts(at, "caption"))  # which file and why, verbatim
    assert "Fixture GPU · torch 9.9 · 2000-01-01" in at.selectbox(key="lcost.rec").options[0]
    gpu_time, gpu_mem = figures(at)[2], figures(at)[3]
    assert [tr["name"] for tr in gpu_mem["data"]] == ["explicit (slope 2.00)", "sdpa-flash (slope 1.00)"]
    assert [tr["name"] for tr in gpu_time["data"]] == ["explicit (slope 2.00)", "sdpa-flash (slope 1.00)"]
