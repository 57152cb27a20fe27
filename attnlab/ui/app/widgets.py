"""Widgets bound to a page's URL parameters, and the small drawing helpers every page shares.

A widget takes its key, bounds and options from the `Param` it edits, so a bound is written once
(on the Param) and the URL parser and the widget cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from attnlab.figures import screen
from attnlab.figures.prebuilt import Prebuilt
from attnlab.params import divisors
from attnlab.ui.app import first_screen, latex, registry, toolbar
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code, md_escape


def keep_choice(key: str, options: Sequence, fallback: Any) -> None:
    """Before a required choice widget is drawn, make sure its state is one of its options.

    The browser occasionally reports a required segmented control as unselected on a rerun;
    without this, the language (or the head view) would silently fall back or break.
    """
    value = st.session_state.get(key)
    if value in options:
        st.session_state[f"_last.{key}"] = value
        return
    last = st.session_state.get(f"_last.{key}")
    st.session_state[key] = last if last in options else fallback


def _bound(page: PageState, name: str) -> dict[str, Any]:
    """The key that ties a widget to its parameter, kept across pages for the whole session."""
    return {"key": page.key(name), "persist_state": "session"}


def _labels(labels: Mapping | None) -> dict[str, Any]:
    """format_func from precomputed labels (a dict survives outside a script run, a lambda over t() does not)."""
    return {"format_func": labels.get} if labels is not None else {}


def number(page: PageState, name: str, label: str, *, where: Any = st, step: float | None = None, **kw) -> Any:
    """A number input with the bounds of its Param (whole numbers when the default is one)."""
    param = page.params[name]
    cast = int if isinstance(param.default, int) else float
    return where.number_input(
        label, min_value=cast(param.lo), max_value=cast(param.hi), step=cast(step or 1), **_bound(page, name), **kw
    )


def optional_number(page: PageState, name: str, label: str, *, empty: str, where: Any = st, **kw) -> Any:
    """A whole-number input its Param may leave empty (None), with the Param's bounds; `empty` is the placeholder
    that says what an empty box means."""
    param = page.params[name]
    return where.number_input(
        label, min_value=int(param.lo), max_value=int(param.hi), step=1, placeholder=empty, key=page.key(name), **kw
    )


def slider(
    page: PageState, name: str, label: str, *, where: Any = st, step: float | None = None, hi: float | None = None, **kw
) -> Any:
    """A slider over the range of its Param (up to `hi` when the end depends on other settings)."""
    param = page.params[name]
    cast = int if isinstance(param.default, int) else float
    top = cast(param.hi if hi is None else hi)
    return where.slider(label, cast(param.lo), top, step=cast(step or 1), **_bound(page, name), **kw)


def toggle(page: PageState, name: str, label: str, *, where: Any = st, **kw) -> bool:
    """An on/off switch for a boolean Param."""
    return where.toggle(label, **_bound(page, name), **kw)


def text_input(page: PageState, name: str, label: str, *, where: Any = st, **kw) -> str:
    """A one-line text box for a text Param."""
    return where.text_input(label, **_bound(page, name), **kw)


def selectbox(
    page: PageState,
    name: str,
    label: str,
    *,
    where: Any = st,
    options: Sequence | None = None,
    labels: Mapping | None = None,
    **kw,
) -> Any:
    """A dropdown over the Param's options (or `options` when they depend on other settings)."""
    opts = list(page.params[name].options if options is None else options)
    return where.selectbox(label, opts, **_labels(labels), **_bound(page, name), **kw)


def segmented(
    page: PageState,
    name: str,
    label: str,
    *,
    where: Any = st,
    options: Sequence | None = None,
    labels: Mapping | None = None,
    **kw,
) -> Any:
    """A row of buttons, one always chosen, over the Param's options (or `options`)."""
    param = page.params[name]
    opts = list(param.options if options is None else options)
    keep_choice(page.key(name), opts, param.default if param.default in opts else opts[0])
    return where.segmented_control(label, opts, required=True, **_labels(labels), **_bound(page, name), **kw)


def multiselect(
    page: PageState,
    name: str,
    label: str,
    *,
    where: Any = st,
    options: Sequence | None = None,
    labels: Mapping | None = None,
    **kw,
) -> list:
    """Any number of the Param's options (or `options`)."""
    opts = list(page.params[name].options if options is None else options)
    return where.multiselect(label, opts, **_labels(labels), **_bound(page, name), **kw)


def size_inputs(page: PageState, cols: Sequence, d_name: str = "d_model", h_name: str = "heads") -> None:
    """d_model, heads (only divisors are offered) and seed, in three given columns."""
    number(
        page,
        d_name,
        "d_model",
        where=cols[0],
        help=t("common.d_model_help", lo=page.params[d_name].lo, hi=page.params[d_name].hi),
        on_change=page.fit_heads,
        args=(d_name, h_name),
    )
    selectbox(
        page, h_name, t("common.heads"), where=cols[1], options=divisors(page[d_name]), help=t("common.heads_help")
    )
    number(page, "seed", t("common.seed"), where=cols[2], help=t("common.seed_help"))


def chart_config(key: str, image_only: bool = False) -> dict:
    """The toolbar of the chart `key` on this page: PNG and SVG at a slide's size (`toolbar`), named for both.

    `image_only` leaves just the image button, for a chart whose clicks pick something (no zoom or pan to get
    in their way).
    """
    config = toolbar.config(registry.current(), key, phone=screen.phone())
    return {**config, "modeBarButtons": [["toImage"]]} if image_only else config


def swipeable(fig: go.Figure | Prebuilt) -> go.Figure | Prebuilt:
    """The figure with no drag action on a phone's column, so a finger's swipe over it scrolls the page.

    Plotly takes a drag on a chart as a zoom and keeps the page from scrolling under it. A phone's charts span the
    column, and the Playground's eleven fill most of its length: a student could scroll only by the margins and the
    gaps between charts. A tap still shows a cell's numbers, and the toolbar keeps its image buttons and full screen
    (`toolbar.config`). Wider columns keep drag-to-zoom."""
    if not screen.phone():
        return fig
    if isinstance(fig, Prebuilt):
        spec = fig.to_dict()
        return Prebuilt({**spec, "layout": {**spec["layout"], "dragmode": False}})
    return go.Figure(fig).update_layout(dragmode=False)


def chart(fig: go.Figure | dict, key: str) -> None:
    """A Plotly chart at full width with a lean toolbar; a prebuilt figure is drawn without Streamlit's theme pass."""
    theme = None if isinstance(fig, Prebuilt) else "streamlit"
    fig = swipeable(fig.mounted_once() if isinstance(fig, Prebuilt) else fig)
    st.plotly_chart(fig, width="stretch", config=chart_config(key), key=key, theme=theme)
    first_screen.sent()


def picking_chart(fig: Prebuilt, key: str, pick: Callable[[Any], None]) -> None:
    """A prebuilt chart whose click picks something: `pick` gets the first clicked point's customdata (a point
    without any picks nothing); the toolbar keeps only the image button, so no zoom or pan gets in a tap's way."""

    def clicked() -> None:
        points = st.session_state[key]["selection"]["points"]
        data = [p["customdata"] for p in points if p.get("customdata") is not None]
        if data:
            pick(data[0])

    config = chart_config(key, image_only=True)
    st.plotly_chart(
        fig.mounted_once(),
        width="stretch",
        on_select=clicked,
        selection_mode="points",
        key=key,
        config=config,
        theme=None,
    )


def shape_text(name: str, dims: Sequence[str], sizes: Sequence[int]) -> str:
    """'`Q: (T, d_k) = (5, 4)`': the symbolic and the actual shape of a matrix, as inline code."""
    return f"`{name}: ({', '.join(dims)}) = ({', '.join(str(s) for s in sizes)})`"


def code_line(line: str) -> None:
    """One line of code as inline code, not a code box: the first code box a visit draws has the browser load and run
    Streamlit's 1.5 MB highlighter, which took a phone longer than a chart (issue 61)."""
    st.markdown(code(line, limit=len(line)))


def stage(index: int, title: str, formula: str, shape: str, note: str | None = None) -> None:
    """Heading, formula, then the shape and a note in one line: three elements, cheap to send on every rerun."""
    st.markdown(f"#### {index}. {title}")
    latex.show(formula)
    st.caption(" · ".join(part for part in (shape, note) if part))


def token_chips(tokens: Sequence[str], key: str) -> int | None:
    """The tokens as chips (shown as text, never HTML); picking one returns its position."""
    return st.pills(
        t("common.tokens_label", n=len(tokens)),
        list(range(len(tokens))),
        format_func={i: md_escape(tok) for i, tok in enumerate(tokens)}.get,
        help=t("common.tokens_help"),
        key=key,
        persist_state="session",
    )
