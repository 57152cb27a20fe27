"""Neuron view: one query token of one head, every product, sum, softmax and weighted value behind its output."""

import streamlit as st

from attnlab.ui.app import registry as pages
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import md_escape
from attnlab.ui.app.widgets import segmented
from attnlab.ui.pages.neuron.sections import (
    PAGE,
    PRESETS,
    follow_the_playground,
    playground_preset,
    stages_of,
    thinking_preset,
)
from attnlab.ui.parts import lab


def main() -> None:
    """The chosen preset's query, taken apart stage by stage."""
    st.title(t("neuron.title"))
    st.caption(t("neuron.intro"))
    lab.load()
    first = PAGE.load()
    follow_the_playground(first)
    labels = {p: t(f"neuron.preset_{p}") for p in PRESETS}
    segmented(PAGE, "preset", t("neuron.preset"), labels=labels)
    view = thinking_preset() if PAGE["preset"] == "thinking" else playground_preset(first)
    PAGE.show_problems()  # after the preset: a query or head past the end is only known once it has run
    PAGE["q"] = st.session_state.get(lab.QUERY) or 0
    lab.save(PAGE)
    lab.LAB.show_problems()
    if view is None:
        return
    n = view.traced.neuron
    st.markdown(
        t("neuron.focus", token=md_escape(view.tokens[n.i]), i=n.i, h=view.head + 1, n=view.n_heads, d_k=n.q_i.size(-1))
    )
    st.caption(view.origin)
    stages_of(view)
    if PAGE["preset"] == "lab":
        pages.link("playground", t("neuron.back"), icon="arrow_back")


main()
