"""The Benchmark and Tiled attention pages in a real headless Chromium: charts draw, a widget change
updates them, a shared link reproduces the state."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import chart_count, chart_text, metric_value, no_exception, open_app, rerun, settle

pytestmark = pytest.mark.e2e
TINY = "seq=16,32&heads=1&head_dim=8&impls=explicit,tiled,sdpa"


def run(tab) -> None:
    rerun(tab, tab.locator('[data-testid="stBaseButton-primary"]').click)  # the page's only primary button


def live_charts(page) -> list[str]:
    """The text of the charts that hold the live run's sizes (T = 16 and 32; the recorded GPU runs start at 512)."""
    return [text for text in map(lambda i: chart_text(page, i), range(chart_count(page))) if "16|32" in text]


@pytest.mark.slow
def test_benchmark_runs_and_draws_then_a_new_setting_redraws(page, server):
    open_app(page, server, f"/benchmark?{TINY}")
    recorded = chart_count(page)  # the recorded GPU runs' headline and charts, drawn before any Run
    assert recorded >= 1 and not live_charts(page) and page.get_by_text("H200", exact=False).first.is_visible()
    run(page)
    page.get_by_role("button", name="Table as CSV").wait_for(timeout=60_000)  # the sweep runs in the background
    settle(page)
    live = live_charts(page)
    assert chart_count(page) == recorded + 5  # the run's time, memory, throughput; all runs side by side (2 charts)
    assert len(live) >= 3 and all("explicit" in text for text in live)
    assert page.get_by_role("button", name="Table as CSV").is_visible()
    page.locator(".st-key-bench-mask").get_by_role("combobox").click()  # the run's mask rule, then its option
    rerun(page, page.get_by_role("option", name="causal", exact=True).click)
    assert "mask=causal" in page.url and "causal=true" in page.url and live_charts(page) == live  # the run stays
    run(page)
    page.get_by_text("B=1, H=1, K/V heads 1, d=8, causal", exact=False).wait_for(timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.slow
def test_tiled_walkthrough_steps_and_a_shared_link_reproduces_it(context, page, server):
    open_app(page, server, "/tiled?T=5&d=3&bq=2&bk=2&causal=true&seed=7&step=8&lang=zh")
    assert chart_count(page) == 4
    before = chart_text(page, 0)
    rerun(page, page.get_by_role("button", name="下一步").click)
    assert "step=9" in page.url and "lang=zh" in page.url
    assert chart_text(page, 0) != before  # the next tile
    assert page.get_by_text("两个输出一致", exact=False).is_visible()  # the last step compares the outputs
    receiver = context.new_page()  # another session, on a smaller screen
    receiver.set_viewport_size({"width": 1000, "height": 900})
    open_app(receiver, server, page.url[page.url.index("/", 8) :])
    assert chart_count(receiver) == 4
    for index in range(4):
        assert chart_text(receiver, index) == chart_text(page, index)
    assert page.locator('[data-testid="stException"]').count() == 0
    receiver.close()


@pytest.mark.slow
def test_cost_measures_live_and_draws(page, server):
    open_app(page, server, "/cost?lang=en&t_min=64&t_max=512&rnn_t=100")
    assert chart_count(page) == 5 and no_exception(page)  # live time and memory, the recorded GPU's two, the RNN
    assert float(metric_value(page, "Fitted slope, memory")) == pytest.approx(1.85, abs=0.15)
    assert float(metric_value(page, "Time spent measuring").split()[0]) < 2.0
