"""Playground: type tokens, pick or edit the weights, and watch every stage of attention."""

import streamlit as st

from attnlab.ui import lab, stages, state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import token_chips

st.title(t("lab.title"))
st.caption(t("lab.intro"))
lab.load()
state.show_problems(lab.SCOPE)
lab.controls()
result = lab.compute()
lab.save()
if lab.text_status(result):
    token_chips(result.tokens, key="lab.query")
    if st.session_state.get("lab.query") is not None:  # the chosen token, opened up in the Neuron view
        st.page_link("views/neuron.py", label=t("neuron.open_from_lab"), icon=":material/hub:")
    lab.check_panel(result)
    lab.weights_editor(result)
    view = stages.head_picker(result.steps.n_heads, lab.K["head"])
    stages.render(result, view, st.session_state[lab.K["causal"]], st.session_state.get("lab.query"))
