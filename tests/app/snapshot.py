"""What a page sends, as comparable JSON: every element and block of an AppTest run, volatile ids left out.

`python -m tests.app.snapshot VISITS_JSON` opens the visits in a fresh process and prints their snapshots,
which is what a visitor of a newly started server sees: the reference the cache test compares against.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from attnlab.lessons import cost
from attnlab.ui.app.state import SCOPES
from tests.app.conftest import assert_clean, open_page

Visit = tuple[str, dict[str, str]]  # (page script, query)
VOLATILE = ("deferredFileId",)  # a download's per-run file id
VIEW = "view"  # a page parameter whose options are views of the page, each opened on its own


def _strip(value: Any) -> Any:
    """A proto dict without the fields that differ on every run (a download's file id)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _strip_styler(element: dict) -> dict:
    """A styled table without its random uuid (pandas names its CSS after it)."""
    styler = element.get("arrowData", {}).get("styler")
    if styler:
        styler.pop("uuid", None)
    return element


def elements(node: Any) -> Iterator[list]:
    """Every block and element under a node of AppTest's tree, in page order, as [type, proto dict]."""
    proto = getattr(node, "proto", None)
    if proto is not None:
        yield [node.type, _strip_styler(_strip(MessageToDict(proto)))]
    for child in getattr(node, "children", {}).values():
        yield from elements(child)


def snapshot(at: AppTest) -> list[list]:
    """Everything the page drew, main area and sidebar."""
    return list(elements(at._tree))


def views(at: AppTest) -> tuple[str, ...]:
    """The options of the `view` parameter of the page that just ran (none when it has no views)."""
    for scope in SCOPES.values():
        param = scope.params.get(VIEW)
        if param is not None and param.options and scope.key(VIEW) in at.session_state:
            return tuple(map(str, param.options))
    return ()


class SteadyClock:
    """A perf_counter that reads 1 ms later at every call, so live timings are the same in every process."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1e-3
        return self.now


@contextmanager
def steady_timings() -> Iterator[None]:
    """The Cost lesson times on its first load: give it a clock that does not depend on the machine's load.

    Its timings are an `st.cache_data` value, so the data caches are emptied before and after: no real
    timing is compared with a steady one, and no steady timing reaches another test in this process.
    """
    real = cost.time
    cost.time = SteadyClock()
    st.cache_data.clear()
    try:
        yield
    finally:
        cost.time = real
        st.cache_data.clear()


def visit(page: str, query: dict[str, str]) -> AppTest:
    """Open one page with a query (inside `steady_timings`), with no traceback on it."""
    at = open_page(page, **query)
    assert_clean(at)
    return at


def main() -> None:
    """Read visits (JSON, the first argument), print their snapshots (JSON) on stdout."""
    visits: list[Visit] = json.loads(sys.argv[1])
    with steady_timings():
        json.dump([snapshot(visit(page, query)) for page, query in visits], sys.stdout)


if __name__ == "__main__":
    main()
