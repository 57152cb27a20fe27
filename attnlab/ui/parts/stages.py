"""The UI's table of the eleven stages, keyed by the core's stage names, and the renderer that draws them.

`STAGES[name]` is how the stage `name` of `attnlab.stages` (the one table of names and order) is
drawn: its title and note (locale keys `stages.<name>`, `stages.<name>_note`), formula, shape and
figure for a `StageView`, and the extra figures modern attention adds inside a stage (RoPE's rotation in the
scores, ALiBi's bias in the mask: `attnlab.ui.parts.modern_view`), so the eleven stages keep their numbers.
The Playground draws them all in order, the presenter one per screen,
a what-if comparison one stage for two runs, and the Real model and decoder pages one head's,
all by name. How each looks lives in `attnlab.ui.parts.stage_view`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from attnlab.stages import NAMES, Step, by_name
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import chart, stage
from attnlab.ui.parts.heads import (
    MAX_HEAD_PANELS,
    MAX_PANEL_CELLS,
    head_groups,
    head_options,
    head_picker,
    panels_per_view,
    shown_heads,
)
from attnlab.ui.parts.modern_view import (
    Extra,
    alibi_extras,
    kv_note,
    masked_formula,
    rope_extras,
    rule_note,
)
from attnlab.ui.parts.modern_view import scores_formula as rotated_scores_formula
from attnlab.ui.parts.stage_view import (
    StageView,
    concat_formula,
    concat_shape,
    model_figure,
    model_shape,
    note,
    output_formula,
    projection_figure,
    projection_formula,
    projection_shape,
    scaled_formula,
    scores_figure,
    split_note,
    square_figure,
    square_shape,
    weights_formula,
    x_figure,
    x_formula,
    x_note,
    z_figure,
    z_formula,
    z_shape,
)

__all__ = [  # the table and its renderer, the view it draws, and the head picker other modules import from here
    "MAX_HEAD_PANELS",
    "MAX_PANEL_CELLS",
    "STAGES",
    "Stage",
    "StageView",
    "draw",
    "head_groups",
    "head_options",
    "head_picker",
    "panels_per_view",
    "render",
    "shown_heads",
    "stable_figure",
]


@dataclass(frozen=True)
class Stage:
    """One stage as the UI draws it: the core stage it shows (by name), its formula, shape line, figure and note."""

    name: str  # a name of attnlab.stages.NAMES; its title is the locale key stages.<name>
    formula: Callable[[StageView], str]
    shape: Callable[[StageView], str]
    figure: Callable[[StageView], go.Figure]
    note: Callable[[StageView], str | None] = lambda view: None
    extras: Callable[[StageView], list[Extra]] = lambda view: []  # drawn between the heading and the figure

    @property
    def step(self) -> Step:
        """The core's stage of the same name: its number, its matrix in a run, its axes."""
        return by_name(self.name)

    @property
    def title(self) -> str:
        """The stage's heading in the session's language."""
        return t(f"stages.{self.name}")


STAGES: dict[str, Stage] = {
    spec.name: spec
    for spec in (
        Stage("x", x_formula, model_shape("X"), x_figure, x_note),
        Stage("q", projection_formula("Q"), projection_shape("Q"), projection_figure("q"), split_note),
        Stage("k", projection_formula("K"), projection_shape("K"), projection_figure("k"), kv_note),
        Stage("v", projection_formula("V"), projection_shape("V"), projection_figure("v"), kv_note),
        Stage(
            "scores",
            rotated_scores_formula,
            square_shape("S"),
            scores_figure,
            note("stages.scores_note"),
            rope_extras,
        ),
        Stage("scaled", scaled_formula, square_shape("S'"), square_figure("scaled"), note("stages.scaled_note")),
        Stage("masked", masked_formula, square_shape("M"), square_figure("masked"), rule_note, alibi_extras),
        Stage(
            "weights",
            weights_formula,
            square_shape("A"),
            square_figure("weights", kind="prob"),
            note("stages.weights_note"),
        ),
        Stage("z", z_formula, z_shape, z_figure, note("stages.z_note")),
        Stage(
            "concat",
            concat_formula,
            concat_shape,
            model_figure(lambda steps: steps.concat),
            note("stages.concat_note", h=lambda view: view.steps.n_heads),
        ),
        Stage(
            "output",
            output_formula,
            model_shape("Output"),
            model_figure(lambda steps: steps.output),
            note("stages.output_note"),
        ),
    )
}
stable_figure = square_figure(
    "shifted"
)  # the stable softmax's shifted scores S'' - m, shown under the weights on request


def draw(spec: Stage, view: StageView, key: str) -> None:
    """One stage: numbered heading, formula, shape, note, any extra figures with their captions, then its figure."""
    stage(spec.step.number, spec.title, spec.formula(view), spec.shape(view), spec.note(view))
    for i, (caption, figure) in enumerate(spec.extras(view)):
        st.caption(caption)
        chart(figure, f"{key}.extra{i}")
    chart(spec.figure(view), key)


def render(view: StageView, key: str = "st", part: slice = slice(None)) -> None:
    """Every stage in the core's order (those in `part`); the stable softmax's shifted scores under the weights."""
    for name in NAMES[part]:
        draw(STAGES[name], view, f"{key}.{name}")
        if name == "weights" and st.toggle(t("stages.show_stable"), key=f"{key}.show_stable"):
            chart(stable_figure(view), f"{key}.stable")
