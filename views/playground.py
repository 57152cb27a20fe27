"""Playground: type tokens, pick or edit the weights, and watch every stage of attention."""

import streamlit as st

from attnlab.pipeline import LabResult
from attnlab.ui.app import first_screen, taskpanel
from attnlab.ui.app import registry as pages
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import token_chips
from attnlab.ui.pages.playground import editor, whatif
from attnlab.ui.parts import lab, pack, stages

PACK_OPEN = "lab.pack_open"  # the folded box of the offline pack's downloads, built once opened


def pick_token(result: LabResult) -> int | None:
    """Token chips: the picked one is outlined in every stage and can be opened in the Neuron view."""
    token_chips(result.tokens, key=lab.QUERY)
    query = lab.query_row(len(result.tokens))
    if query is not None:
        pages.link("neuron", t("neuron.open_from_lab"), icon="hub")
    return query


def classroom(result: LabResult) -> None:
    """For teachers: this state in presenter mode, or as an offline pack."""
    left, right = st.columns([1, 2], vertical_alignment="top")
    with left:
        whatif.present_link()
    pack.pack_box(right, PACK_OPEN, lab.config(), result)


def main() -> None:
    """Settings first, then the check against PyTorch, the editor and every stage (sent before the three above)."""
    st.title(t("lab.title"))
    st.caption(t("lab.intro"))
    taskpanel.offer()  # the course, in one line a newcomer meets first
    lab.load()
    whatif.WHATIF.load()
    lab.LAB.show_problems()
    whatif.WHATIF.show_problems()
    lab.controls()
    result = lab.compute()
    lab.save(whatif.WHATIF)
    if not lab.text_status(result):
        return
    query = pick_token(result)
    above = st.container()  # filled after the stages, so the first chart reaches the browser first
    shown = stages.head_picker(lab.LAB, "head", result.steps.n_heads, len(result.tokens))
    view = stages.StageView(
        result.tokens,
        result.x,
        result.steps,
        shown,
        lab.LAB["causal"],
        query,
        positions=lab.LAB["pe"],
        rule=result.rule,
    )
    change = whatif.picker()

    def draw(part: slice) -> None:
        if change == "none":
            stages.render(view, part=part)
        else:
            whatif.render(lab.config(), change, view, part=part)

    first_screen.in_two(draw, len(stages.STAGES))
    with above:
        editor.check_panel(result)
        editor.weights_editor(result)
        classroom(result)


main()
