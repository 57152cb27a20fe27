"""Real model: all-MiniLM-L6-v2's trained heads, run through attnlab's own attention and checked on screen."""

import streamlit as st

from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import text_input
from attnlab.ui.pages.real_model import check, real
from attnlab.ui.parts import inspector


def main() -> None:
    """The sentence, its WordPiece tokens, then the chosen view; the check against the reference libraries aside."""
    st.title(t("real.title"))
    st.caption(t("real.intro"))
    real.fit_link(real.REAL.load())
    real.REAL.show_problems()
    text_input(real.REAL, "text", t("real.text"), help=t("real.text_help", cap=real.MAX_TOKENS))
    model = real.load()
    run = real.sentence() if model is not None else None
    if run is not None:
        real.fit_query(run)
    state.save(real.REAL)
    if model is None or run is None:
        return
    real.token_line(run)
    check.check_panel(run)
    view = real.view_picker()
    if view == "stages":
        real.stages_view(model, run)
    elif view == "similarity":
        real.similarity_view(run)
    else:  # model, head, qk, finder, rollout: what every attention source shows
        inspector.draw(view, real.shown(run))


main()
