"""The router every entry point serves: one session's script run, and the server's lifespan that warms it.

`app.py` (at the repository's root) and `cloud/streamlit_app.py` (Community Cloud's entry point) are the same
five lines around these two functions: served by `streamlit run` they build an `st.App` whose lifespan is
`warm_in_background`, and a session's run of their file (as `__main__`, which is how Streamlit and AppTest run
a script) calls `route()`. So both serve the same pages at the same URLs with the same warm-up.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st


def route() -> None:
    """One script run: page config, the chart library's preload, the app's settings, the page and its task panel, its
    link and notebook."""
    from attnlab.ui.app import first_screen, preload, viewport, warmup

    st.set_page_config(page_title="attnlab", page_icon=":material/center_focus_strong:", layout="wide")
    first_screen.new_run()
    preload.charts()  # before anything that may wait for torch
    warmup.hurry()  # and the server's warm-up back at normal priority, since this run may wait on its imports
    from attnlab.ui.app import courselink, taskpanel
    from attnlab.ui.app import registry as pages
    from attnlab.ui.app.shell import about, notebook_download, settings, share_link

    settings()
    page = pages.navigation()
    viewport.probe()  # after the page is named: a report the probe sends goes to this page (`viewport.probe`)
    courselink.follow()  # a course link followed in this session: its task, and the page reads its link again
    panel = taskpanel.slot()  # the open task's place: the sidebar, or above the page on a phone
    about()
    page.run()
    taskpanel.fill(panel, page.url_path)  # graded on the link the page has just written
    share_link()
    notebook_download()


@asynccontextmanager
async def warm_in_background(_app: Any) -> AsyncIterator[None]:
    """Warm the first page's imports beside the server (`attnlab.ui.app.warmup`), torch set to one thread first.

    One intra-op thread unless OMP_NUM_THREADS says otherwise: a page's matrices are small, and torch's pool of one
    thread per core spent more CPU waking and syncing threads than computing (server CPU per change, measured with
    `scripts/server_cost.py`: Multi-head 230 ms with torch's default of 2 threads on 2 cores, 140 ms with one;
    Playground 130 and 100), CPU that every other session on a shared server waits for. The Benchmark page's runs
    set their own threads. Set here, before the warm-up's first import of torch, which reads it once.
    """
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from attnlab.ui.app import warmup

    warmup.start()
    yield
