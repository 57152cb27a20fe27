"""Sections below the fold: built and sent to the browser only once a reader opens them; the open ones stay in the link.

On a mid-range phone a page's first chart waited for every chart and element the page sent with it, seen or not
(issue 61: a chart, a table or a code box costs the browser about as much off screen as on it). So a long page's
later sections start folded under their titles, and their contents are built only in a run where the reader has
opened them. Which are open is the page's `open` parameter (`params.open_param`, a comma list of section names): a
shared link opens the same sections, and a section's own settings stay in the link while it is shut. A box that
belongs to the session rather than to what the page shows (a sidebar's settings, a download, a key to paste) folds the
same way with `folded`, its open state the session's alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import streamlit as st

from attnlab.ui.app.state import PageState

OPEN = "open"  # the parameter of each page with folded sections: which of them are open


def key(page: PageState, name: str) -> str:
    """The session-state key of a section's expander (its open state while the page is on screen)."""
    return page.key(f"{OPEN}.{name}")


def is_open(page: PageState, name: str) -> bool:
    """Whether the section is open (in the link, or opened since)."""
    return name in page[OPEN]


def _toggled(page: PageState, name: str) -> None:
    """The reader opened or shut the section: the link follows, in the parameter's own order."""
    now = bool(st.session_state[key(page, name)])
    was = set(page[OPEN])
    page[OPEN] = [n for n in page.params[OPEN].options if (n == name and now) or (n != name and n in was)]
    st.query_params[OPEN] = page.params[OPEN].dump(page[OPEN])  # now: the page may have written its link already


@contextlib.contextmanager
def section(page: PageState, name: str, title: str, icon: str | None = None) -> Iterator[bool]:
    """An expander under `title`: yields whether its contents are to be built in this run (it is open).

    The expander's state starts from the link each time the page is drawn anew (Streamlit forgets a widget's state
    on a page that did not draw it), so a section opened here and then visited from another page is still open.
    """
    if key(page, name) not in st.session_state:
        st.session_state[key(page, name)] = is_open(page, name)
    box = st.expander(title, key=key(page, name), on_change=_toggled, args=(page, name), icon=icon)
    opened = bool(box.open)
    if opened != is_open(page, name):  # set without its callback (AppTest sets the state itself): the link follows
        _toggled(page, name)
    with box:
        yield opened


@contextlib.contextmanager
def folded(where: Any, title: str, key: str, icon: str | None = None) -> Iterator[bool]:
    """An expander in `where` whose contents are built only in a run where it is open: opening it reruns the page.
    Yields whether it is open, inside it. Not in the link: Streamlit keeps its state for the session (`key`)."""
    box = where.expander(title, key=key, on_change="rerun", icon=icon)
    with box:
        yield bool(box.open)
