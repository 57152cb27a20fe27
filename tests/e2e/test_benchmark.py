"""Benchmark in a real Chromium: while one tab's live run is going, a second tab pressing Run is told to wait."""

from __future__ import annotations

import pytest

from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import main_text, no_exception, open_app, rerun

pytestmark = pytest.mark.e2e

CAT = catalog("en")
# 30 rows of tiny sizes (each timed for at least 0.1 s): the first run is still going when the second tab presses Run
TINY = "/benchmark?lang=en&seq=16,32,64,128,256,512&heads=1&head_dim=8&impls=explicit,tiled,sdpa,sdpa-math,mha"


def test_a_second_tab_is_told_a_run_is_going_while_the_first_runs(context, server):
    first, second = context.new_page(), context.new_page()
    try:
        open_app(first, server, TINY)
        open_app(second, server, TINY)
        rerun(first, lambda: first.get_by_role("button", name=CAT["benchmark.run"]).click())
        assert first.locator('[data-testid="stProgress"]').count() == 1  # its sweep is going, polled by a fragment
        rerun(second, lambda: second.get_by_role("button", name=CAT["benchmark.run"]).click())
        said = main_text(second)
        # The server refuses a start only while a sweep runs (tests/unit/test_live.py), so this message says the first
        # was going when the second pressed Run; looking at the first tab again here raced the sweep's end.
        assert CAT["benchmark.busy"].split("{")[0] in said and no_exception(second)
        assert CAT["benchmark.your_run"] not in said and "seq=16%2C32%2C64%2C128%2C256%2C512" in second.url
        first.get_by_text(CAT["benchmark.your_run"], exact=True).wait_for(timeout=120_000)  # no click: polling
        assert no_exception(first) and "cores busy on average" in main_text(first)
    finally:
        first.close()
        second.close()
