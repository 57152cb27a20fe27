"""A class at once (not in the default run: `python -m pytest -m load`): scripts/load.py against the DESIGN budgets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attnlab.testing import ROOT

pytestmark = [pytest.mark.load, pytest.mark.e2e]


def test_thirty_sessions_settle_in_time_with_no_cross_talk_and_no_leak(tmp_path):
    out = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, "scripts/load.py", "--sessions", "30", "--loads", "200", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    report = json.loads(out.read_text())
    burst = report["burst"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert burst["server_busy_until_s"] + burst["one_change_alone_drawn_s"] <= burst["settle_budget_s"]
    assert not burst["sessions_with_wrong_link"] and not burst["sessions_not_showing_own_tokens"]
    assert burst["idle_mib_per_session"] <= 20
    assert report["leak"]["growth_second_half_mib"] <= 30
