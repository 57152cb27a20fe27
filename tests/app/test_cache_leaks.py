"""No session's language or palette leaks into another's through a cache shared by the whole server.

`st.cache_resource` and `st.cache_data` are shared by every session of a process, and so is AppTest's
process: every registered page and each of its views is opened first in Chinese, then with `palette=cb`,
and only then in English with the default palette. That last visit must show exactly what a visitor of a
freshly started server sees, which a separate process (started while this one warms its caches) records.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attnlab.ui.app.registry import PAGES
from tests.app.conftest import ROOT
from tests.app.snapshot import VIEW, Visit, snapshot, steady_timings, views, visit

# What earlier sessions may have left in a shared cache: both settings at once first (a cache that keeps the first
# value it saw), then each alone (a cache keyed on one setting but not the other).
pytestmark = pytest.mark.xdist_group("cache-leaks")  # one worker builds `runs` (every page, twice over) once

LEAKY = ({"lang": "zh", "palette": "cb"}, {"lang": "zh"}, {"palette": "cb"})


def fresh_process(visits: list[Visit]) -> subprocess.Popen:
    """The same visits in a new process, whose caches nobody has touched."""
    command = [sys.executable, "-m", "tests.app.snapshot", json.dumps(visits)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def runs() -> dict:
    """Every page and view after zh and cb visits, in English with the default palette, here and in a new process."""
    leaky: dict[int, list[list]] = {}
    plain: list[Visit] = []
    with steady_timings():
        for spec in PAGES:
            first = visit(spec.path, LEAKY[0])
            leaky[len(plain)] = [snapshot(first)]
            options = views(first)
            plain += [(spec.path, {VIEW: v}) for v in options] or [(spec.path, {})]
            for extra in [{VIEW: v} for v in options] or [{}]:
                for query in LEAKY if extra else LEAKY[1:]:  # a page without views had LEAKY[0] as its first visit
                    visit(spec.path, {**query, **extra})
        proc = fresh_process(plain)
        here = [snapshot(visit(page, query)) for page, query in plain]
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    return dict(plain=plain, here=here, fresh=json.loads(out), leaky=leaky)


def parted(a, b, path: str = "") -> str:
    """The first place where two JSON values differ (a chart's spec is read as the JSON it holds)."""
    a, b = (json.loads(x) if isinstance(x, str) and x.startswith("{") else x for x in (a, b))
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        keys = sorted(a, key=lambda k: k == "id")  # a widget's id hashes its content: say what differs first
        return next(parted(a[k], b[k], f"{path}/{k}") for k in keys if a[k] != b[k])
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next(parted(x, y, f"{path}/{i}") for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    return f"{path}: {str(a)[:200]!r} != {str(b)[:200]!r}"


def test_every_page_and_view_in_english_and_default_colours_is_what_a_fresh_server_shows(runs):
    wrong = [
        f"{page} {query}: {parted(here, fresh)}"
        for (page, query), here, fresh in zip(runs["plain"], runs["here"], runs["fresh"], strict=True)
        if here != fresh
    ]
    assert not wrong, "\n".join(wrong)


def test_the_earlier_chinese_visit_really_drew_something_else(runs):
    """The comparison can fail: each page's first visit, in zh with cb colours, differs from the plain one."""
    same = [runs["plain"][i][0] for i, (zh,) in runs["leaky"].items() if zh == runs["here"][i]]
    assert not same


def test_the_real_model_page_is_covered_view_by_view(runs):
    """Views are found from the page's own `view` parameter, so a new view is opened without changing this test."""
    real_views = [query[VIEW] for page, query in runs["plain"] if page.endswith("real_model.py")]
    assert {"model", "head", "stages"} <= set(real_views)
