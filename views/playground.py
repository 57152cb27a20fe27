"""Playground: type tokens, pick or edit the weights, and watch every stage of attention."""

import streamlit as st

from attnlab.pipeline import LabResult
from attnlab.ui import lab, pages, stages
from attnlab.ui.i18n import t
from attnlab.ui.widgets import token_chips


def pick_token(result: LabResult) -> int | None:
    """Token chips: the picked one is outlined in every stage and can be opened in the Neuron view."""
    token_chips(result.tokens, key=lab.QUERY)
    query = lab.query_row(len(result.tokens))
    if query is not None:
        pages.link("neuron", t("neuron.open_from_lab"), icon="hub")
    return query


def main() -> None:
    """Settings first, then the check against PyTorch, the editor and every stage."""
    st.title(t("lab.title"))
    st.caption(t("lab.intro"))
    lab.load()
    lab.LAB.show_problems()
    lab.controls()
    result = lab.compute()
    lab.save()
    if not lab.text_status(result):
        return
    query = pick_token(result)
    lab.check_panel(result)
    lab.weights_editor(result)
    shown = stages.head_picker(lab.LAB, "head", result.steps.n_heads, len(result.tokens))
    view = stages.StageView(
        result.tokens, result.x, result.steps, shown, lab.LAB["causal"], query, positions=lab.LAB["pe"]
    )
    stages.render(view)


main()
