"""Page state that lives in the URL: read and validated once per session, bound to widgets, written back every run.

Streamlit's own `bind="query-params"` drops bad values silently (and raises on some), so pages
validate the query themselves and say what they used instead. A replaced value is kept as its
reason and fields, and translated when shown, so the message follows a later language switch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attnlab.figures.palette import DEFAULT, PALETTES
from attnlab.links.common import COURSE_NAMES, course_params
from attnlab.params import Invalid, Param, choice_param, divisor_at_most, int_param
from attnlab.ui.app.i18n import LANGS, t
from attnlab.ui.app.text import code

URL_PREVIEW_CHARS = 40  # how much of a rejected URL value a message quotes
SCOPES: dict[str, PageState] = {}  # every page state by scope, so tests can reach each page's parameters


@dataclass(frozen=True)
class Problem:
    """A value that could not be honoured: a locale key and its fields (shown as literal text, never markup)."""

    key: str
    fmt: tuple[tuple[str, Any], ...]

    def text(self) -> str:
        """The sentence in the current language, every field in code style so no outside text becomes markup."""
        return t(self.key, **{name: code(value) for name, value in self.fmt})


def problem(key: str, **fmt: Any) -> Problem:
    """A Problem from keyword fields."""
    return Problem(key, tuple(fmt.items()))


def url_problem(param: Param, raw: str, bad: Invalid) -> Problem:
    """A URL value that was replaced: which parameter, what the link said (cut short) and what is used instead."""
    shown = raw if len(raw) <= URL_PREVIEW_CHARS else raw[:URL_PREVIEW_CHARS] + "…"
    asked = f"{param.name}={shown}"
    return problem(f"common.url_{bad.reason}", asked=asked, name=param.name, used=param.dump(bad.used), **bad.fmt)


def session_id() -> str:
    """This browser session's id (whose server-wide live run is whose)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else ""


def adopt(keys: Sequence[str]) -> None:
    """Hand values kept from another page to this page's widgets of the same keys.

    Streamlit gives a keyed widget a different id on every page, so without this a widget
    shared by two pages would start from its default after a page switch. Writing each value
    back to itself before the widgets are drawn makes the new widget take it.
    """
    for k in keys:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


class PageState:
    """One page's URL parameters, each bound to the session-state key its widget uses (`<scope>.<name>`)."""

    def __init__(self, scope: str, params: Sequence[Param]) -> None:
        self.scope = scope
        self.params = {p.name: p for p in params}
        SCOPES[scope] = self

    def key(self, name: str) -> str:
        """The session-state (and widget) key of one parameter."""
        return f"{self.scope}.{name}"

    def __getitem__(self, name: str) -> Any:
        return st.session_state[self.key(name)]

    def __setitem__(self, name: str, value: Any) -> None:
        st.session_state[self.key(name)] = value

    def load(self) -> bool:
        """Put each URL value (or the default) into its key once per session; True on that first load.

        Later loads hand the kept values to this page's widgets (see `adopt`).
        """
        flag = f"_loaded.{self.scope}"
        if st.session_state.get(flag):
            adopt([self.key(name) for name in self.params])
            return False
        st.session_state[flag] = True
        problems = []
        for param in self.params.values():
            raw = st.query_params.get(param.name)
            value, bad = param.read(raw)
            if bad is not None:
                problems.append(url_problem(param, raw, bad))
            st.session_state.setdefault(self.key(param.name), value)
        st.session_state[self._problems] = problems
        return True

    def values(self) -> dict[str, Any]:
        """The current value of every parameter."""
        return {name: self[name] for name in self.params}

    def query(self) -> dict[str, str]:
        """The parameters as URL text."""
        return {name: p.dump(self[name]) for name, p in self.params.items()}

    @property
    def _problems(self) -> str:
        return f"_problems.{self.scope}"

    def add_problem(self, key: str, **fmt: Any) -> None:
        """Record a replaced value found after loading (e.g. heads that do not divide d_model)."""
        st.session_state.setdefault(self._problems, []).append(problem(key, **fmt))

    def rebound(self, name: str, hi: int) -> None:
        """Check the link's whole number `name` again against an upper bound known only once the data is loaded.

        For a page whose shapes come from its data (a model's layers and heads): the Param accepts any size the app
        allows, and on the session's first load this re-reads the link's value with [lo, hi], replacing the value
        and the message exactly as a Param with those bounds would have.
        """
        raw, param = st.query_params.get(name), self.params[name]
        if raw is None:
            return
        bounded = int_param(name, param.default, int(param.lo), hi)
        try:
            bounded.parse(raw)
            return
        except Invalid as bad:
            self[name] = bad.used
            kept = [p for p in st.session_state.get(self._problems) or [] if dict(p.fmt).get("name") != name]
            kept.append(url_problem(bounded, raw, bad))
            order = {n: i for i, n in enumerate(self.params)}  # messages in the page's order of parameters
            kept.sort(key=lambda p: order.get(dict(p.fmt).get("name"), len(order)))
            st.session_state[self._problems] = kept

    def show_problems(self, where: Any = st) -> None:
        """Warn about values that could not be honoured, in the current language, until dismissed."""
        problems = st.session_state.get(self._problems) or []
        if not problems:
            return
        with where.container(border=True):
            for p in problems:
                st.warning(p.text(), icon=":material/warning:")
            if st.button(t("common.dismiss"), key=f"_dismiss.{self.scope}"):
                st.session_state[self._problems] = []
                st.rerun()

    def fit_heads(self, d_name: str, h_name: str, d_state: PageState | None = None) -> int | None:
        """Make a head count divide d_model (the nearest divisor below); return the count it replaced.

        `d_state` is the page whose d_model the heads must divide (default: this page).
        """
        d_model, heads = (d_state or self)[d_name], self[h_name]
        if d_model % heads == 0:
            return None
        self[h_name] = divisor_at_most(d_model, heads)
        return heads

    def heads_must_divide(self, d_name: str, h_name: str, first: bool, d_state: PageState | None = None) -> None:
        """After loading a link: fix a head count that does not divide d_model, and say so on the first run."""
        replaced = self.fit_heads(d_name, h_name, d_state)
        if replaced is not None and first:
            asked, d_model = f"{h_name}={replaced}", f"{d_name}={(d_state or self)[d_name]}"
            self.add_problem("common.url_heads_not_dividing", asked=asked, d_model=d_model, used=self[h_name])


APP = PageState(  # the settings every page shares and every link carries (links.params("app") reads the same)
    "app", (choice_param("lang", "en", LANGS), choice_param("palette", DEFAULT.name, tuple(PALETTES)), *course_params())
)


def app_query() -> dict[str, str]:
    """The app-wide values as URL text; the course's task and progress only while they hold something."""
    return {name: value for name, value in APP.query().items() if value or name not in COURSE_NAMES}


def save(*pages: PageState, extra: dict[str, str] | None = None) -> None:
    """Write these pages' state, the app's own settings and `extra` into the URL, so a copied link reproduces it."""
    query: dict[str, str] = {}
    for page in pages:
        query.update(page.query())
    query.update(app_query())
    query.update(extra or {})
    if dict(st.query_params) != query:
        st.query_params.from_dict(query)
