"""The Benchmark page's filters over one result set: a dtype, head size, mask and K/V head count, and implementations.

A recorded file holds some 600 rows across three dtypes, two head sizes, four masks and two K/V head counts; drawn
at once that was thirty lines per chart with legends of thirty entries. Every result set on the page (the live run,
a recorded file, an upload) is drawn through `pick`: one value of each setting it varies, chosen among those it
holds (a picker only where there is a choice), and the implementations to draw, so each chart draws one line per
implementation. The choices are this session's (a recorded file's dtype is also in the link, `rdtype`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from attnlab.bench.config import IMPLS
from attnlab.bench.row import ResultRow
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import keep_choice
from attnlab.ui.pages.benchmark import modern

FIELDS = ("dtype", "head_dim", "mask", "kv_heads")
DTYPE_ORDER = ("bfloat16", "float16", "float32", "float64")  # the headline's dtype first
MASK_ORDER = ("full", "causal")  # then the rules beyond them, as written


def ordered(field: str, values: set) -> list:
    """A field's values in the order a picker lists them (the first is the default)."""
    if field == "dtype":
        return sorted(values, key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER))
    if field == "mask":
        return sorted(values, key=lambda m: (MASK_ORDER.index(m) if m in MASK_ORDER else len(MASK_ORDER), m))
    if field == "head_dim":
        return sorted(values, reverse=True)  # 128 first: the headline's
    return sorted(values, reverse=True)  # every head its own keys and values first


def _choose(label: str, key: str, options: list, labels: dict | None = None):
    """One session-only choice among what the set holds (no picker when there is one option)."""
    if len(options) == 1:
        return options[0]
    keep_choice(key, options, options[0])
    return st.selectbox(label, options, key=key, **({"format_func": labels.get} if labels else {}))


def pick(
    rows: Sequence[ResultRow], key: str, fixed: dict | None = None, lead: Callable[[Any], object] | None = None
) -> list[ResultRow]:
    """The rows of one slice of `rows`, chosen by this session's pickers; `fixed` holds settings chosen elsewhere
    (a recorded file's dtype, from the link), and `lead` draws that choice's widget in the pickers' row (it is given
    the first column). Implementations: every one the slice holds, unless narrowed."""
    fixed = dict(fixed or {})
    labels = {
        "dtype": (t("benchmark.dtype"), None),
        "head_dim": (t("benchmark.head_dim"), None),
        "mask": (t("benchmark.mask"), modern.mask_names(rows)),
        "kv_heads": (t("benchmark.kv_heads"), None),
    }
    out = [r for r in rows if all(getattr(r, f) == v for f, v in fixed.items())]
    choosing = [f for f in FIELDS if f not in fixed and len({getattr(r, f) for r in out}) > 1]
    n = len(choosing) + (lead is not None)
    cols = iter(st.columns(n)) if n else iter(())
    if lead is not None:
        lead(next(cols))
    for field in FIELDS:
        if field in fixed:
            continue
        options = ordered(field, {getattr(r, field) for r in out})
        if not options:
            return []
        label, names = labels[field]
        if field in choosing:
            with next(cols):
                chosen = _choose(label, f"{key}.{field}", options, names)
        else:
            chosen = options[0]
        out = [r for r in out if getattr(r, field) == chosen]
    return implementations(out, key)


def implementations(rows: list[ResultRow], key: str) -> list[ResultRow]:
    """The rows of the implementations this session draws (all of those the rows hold, unless it narrowed them)."""
    held = [i for i in IMPLS if any(r.impl == i for r in rows)]
    if len(held) < 2:
        return rows
    widget, off = f"{key}.impls", st.session_state.get(f"{key}.impls_off", set())
    st.session_state[widget] = [i for i in held if i not in off] or held  # a slice's new ones are drawn too
    chosen = st.multiselect(t("benchmark.impls"), held, key=widget, on_change=_remember, args=(key, held))
    return [r for r in rows if r.impl in chosen]


def _remember(key: str, held: list[str]) -> None:
    """Which implementations this session took off (so that one a later slice adds is drawn, not hidden)."""
    off = set(st.session_state.get(f"{key}.impls_off", set()))
    kept = set(st.session_state[f"{key}.impls"])
    st.session_state[f"{key}.impls_off"] = (off - set(held)) | (set(held) - kept)
