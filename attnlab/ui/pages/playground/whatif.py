"""The Playground's "Compare with…": one state run twice with one change: both runs and their difference per stage."""

from __future__ import annotations

import urllib.parse

import numpy as np
import streamlit as st

from attnlab import links
from attnlab.classroom.whatif import Change, StageDiff, WhatIf, compare
from attnlab.figures import grid_figure, matrix_figure
from attnlab.pipeline import LabConfig
from attnlab.stages import column_labels, head_breaks
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import chart, selectbox, stage
from attnlab.ui.parts.stages import STAGES, StageView

WHATIF = PageState("whatif", links.params("whatif"))


def picker() -> str:
    """The change to compare with ('none' for the usual single run)."""
    labels = {name: t(f"present.whatif.{name}") for name in WHATIF.params["compare"].options}
    return selectbox(WHATIF, "compare", t("present.whatif.label"), labels=labels, help=t("present.whatif.help"))


def present_link() -> None:
    """Open this exact state in presenter mode (same parameters, step 1)."""
    query = {**st.query_params.to_dict(), "step": "1"}
    st.link_button(
        t("present.ui.open"),
        "present?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote),
        icon=":material/co_present:",
        help=t("present.ui.open_help"),
    )


def panels(pair: StageDiff, head: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The two runs' matrices of one stage (one head's for a per-head stage, both at one width) and their difference."""
    base, changed = pair.padded()
    if pair.step.per_head:
        return [base[head], changed[head]], pair.diff[head]
    return [base, changed], pair.diff


def draw_pair(pair: StageDiff, what: WhatIf, view: StageView) -> None:
    """One stage of both runs side by side, and below it their difference (or that nothing changed)."""
    name, spec = pair.step.name, STAGES[pair.step.name]
    stage(pair.step.number, spec.title, spec.formula(view), spec.shape(view))
    head = view.one if view.one is not None else view.shown[0]
    if pair.step.per_head and what.base.steps.n_heads > 1:
        st.caption(t("present.whatif.head_shown", h=head + 1, n=what.base.steps.n_heads))
    wider = what.base if pair.base.shape[-1] >= pair.changed.shape[-1] else what.changed
    rows, cols = what.base.tokens, column_labels(pair.step, wider)
    both, diff = panels(pair, head)
    kind = pair.step.kind
    titles = [t("present.whatif.this_run"), t("present.whatif.other_run")]
    chart(grid_figure(both, titles, rows, cols, kind=kind, row_name=t("stages.token"), col_name=""), f"whatif.{name}")
    if not pair.comparable:
        widths = dict(this=pair.base.shape[-1], other=pair.changed.shape[-1])
        st.caption(t("present.whatif.shapes_differ", **widths))
        return
    if pair.unchanged:
        st.caption(t("present.whatif.unchanged"))
        return
    breaks = head_breaks(what.base, pair.step) if pair.step.head_blocks else []
    chart(
        matrix_figure(
            diff, rows, cols, title=t("present.whatif.difference"), col_breaks=breaks, row_name=t("stages.token")
        ),
        f"whatif.{name}.diff",
    )
    notes = [t("present.whatif.max_diff", d=f"{pair.max_abs:.3g}")]
    if pair.one_blocked.any():
        notes.append(t("present.whatif.mask_changed"))
    st.caption(" · ".join(notes))


def render(config: LabConfig, kind: str, view: StageView, part: slice = slice(None)) -> None:
    """Every stage of the state and of the state with the change (those in `part`), under a word when the change
    changes nothing (above the first stage)."""
    if kind == "reset_edits" and not config.edits and not part.start:
        st.info(t("present.whatif.no_edits"), icon=":material/info:")
    what = compare(config, Change(kind))
    for pair in what.stages[part]:
        draw_pair(pair, what, view)
