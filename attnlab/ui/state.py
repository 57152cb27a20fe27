"""Page state that lives in the URL: read and validated once per session, written back every run.

Streamlit's own `bind="query-params"` drops bad values silently (and raises on some), so the
pages validate the query themselves and say what they used instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from attnlab.params import Invalid, Param, divisor_at_most
from attnlab.ui.i18n import t


def key(scope: str, name: str) -> str:
    """The session-state (and widget) key of one parameter of one page."""
    return f"{scope}.{name}"


def load(scope: str, params: Sequence[Param]) -> None:
    """Once per session and page: put each URL value (or the default) into its widget key."""
    flag = f"_loaded.{scope}"
    if st.session_state.get(flag):
        adopt([key(scope, p.name) for p in params])
        return
    st.session_state[flag] = True
    problems = []
    for param in params:
        raw = st.query_params.get(param.name)
        value = param.default
        if raw is not None:
            try:
                value = param.parse(raw)
            except Invalid as bad:
                value = bad.used
                problems.append(url_problem(param.name, raw, bad, param.dump(bad.used)))
        st.session_state.setdefault(key(scope, param.name), value)
    st.session_state[f"_problems.{scope}"] = problems


def adopt(keys: Sequence[str]) -> None:
    """Hand values kept from another page to this page's widgets of the same keys.

    Streamlit gives a keyed widget a different id on every page, so without this a widget
    shared by two pages would start from its default after a page switch. Writing each value
    back to itself before the widgets are drawn makes the new widget take it.
    """
    for k in keys:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


def url_problem(name: str, raw: str, bad: Invalid, used: str | None = None) -> str:
    """One sentence, in the user's language, on a URL value that was replaced."""
    shown = raw if len(raw) <= 40 else raw[:40] + "…"
    return t(f"common.url_{bad.reason}", name=name, value=shown, used=bad.used if used is None else used, **bad.fmt)


def add_problem(scope: str, message: str) -> None:
    """Record a replaced value found after loading (e.g. heads that do not divide d_model)."""
    st.session_state.setdefault(f"_problems.{scope}", []).append(message)


def show_problems(scope: str) -> None:
    """Warn about URL values that could not be honoured, until the user dismisses them."""
    problems = st.session_state.get(f"_problems.{scope}") or []
    if not problems:
        return
    with st.container(border=True):
        for message in problems:
            st.warning(message, icon=":material/warning:")
        if st.button(t("common.dismiss"), key=f"_dismiss.{scope}"):
            st.session_state[f"_problems.{scope}"] = []
            st.rerun()


def fit_heads(d_key: str, h_key: str) -> int | None:
    """Make a head count divide d_model (the nearest divisor below); return the count it replaced."""
    d_model, heads = st.session_state[d_key], st.session_state[h_key]
    if d_model % heads == 0:
        return None
    st.session_state[h_key] = divisor_at_most(d_model, heads)
    return heads


def heads_must_divide(scope: str, d_key: str, h_key: str, name: str, first: bool) -> None:
    """After loading a link: fix a head count that does not divide d_model, and say so on the first run."""
    replaced = fit_heads(d_key, h_key)
    if replaced is not None and first:
        d_model, used = st.session_state[d_key], st.session_state[h_key]
        add_problem(scope, t("common.url_heads_not_dividing", name=name, heads=replaced, d_model=d_model, used=used))


def values(scope: str, params: Sequence[Param]) -> dict[str, Any]:
    """The current value of every parameter of a page."""
    return {p.name: st.session_state[key(scope, p.name)] for p in params}


def save(scope: str, params: Sequence[Param], extra: dict[str, str] | None = None) -> None:
    """Write the page's state (and the language) into the URL so a copied link reproduces it."""
    query = {p.name: p.dump(st.session_state[key(scope, p.name)]) for p in params}
    query["lang"] = st.session_state.get("lang", "en")
    query.update(extra or {})
    if dict(st.query_params) != query:
        st.query_params.from_dict(query)
