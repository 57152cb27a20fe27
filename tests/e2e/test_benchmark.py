"""Benchmark in a real Chromium: while one tab's live run is going, a second tab pressing Run is told to wait."""

from __future__ import annotations

import pytest

from attnlab.limits import LIVE_BENCH_BUDGET_S
from attnlab.testing import PATIENCE_MS
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import main_text, no_exception, open_app, rerun

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CAT = catalog("en")
TINY = "/benchmark?lang=en&seq=16,32,64,128,256,512&heads=1&head_dim=8&impls=explicit,tiled,sdpa,sdpa-math,mha"
ENDS_MS = LIVE_BENCH_BUDGET_S * 1000 + PATIENCE_MS  # the runner stops a sweep at its budget; then a poll, a rerun


def test_a_second_tab_is_told_a_run_is_going_while_the_first_runs(context, server, hold):
    """The sweep is held going after its last row (`hold`), so the second tab's press finds it going however slow
    the machine is; once let go, only the first tab's polling fragment can bring its result (nothing else reruns it).
    """
    first, second = context.new_page(), context.new_page()
    try:
        open_app(first, server, TINY)
        open_app(second, server, TINY)
        rerun(first, lambda: first.get_by_role("button", name=CAT["benchmark.run"]).click())
        assert first.locator('[data-testid="stProgress"]').count() == 1  # its sweep is going, polled by a fragment
        rerun(second, lambda: second.get_by_role("button", name=CAT["benchmark.run"]).click())
        said = main_text(second)
        assert CAT["benchmark.busy"].split("{")[0] in said and no_exception(second)
        assert CAT["benchmark.your_run"] not in said and "seq=16%2C32%2C64%2C128%2C256%2C512" in second.url
        assert CAT["benchmark.your_run"] not in main_text(first)
        rerun(first, hold, timeout=ENDS_MS, whole=True)  # let it end: the fragment sees it and reruns the page
        assert no_exception(first) and "cores busy on average" in main_text(first)
        assert first.get_by_text(CAT["benchmark.your_run"], exact=True).count() == 1
    finally:
        first.close()
        second.close()
