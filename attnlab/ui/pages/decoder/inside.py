"""The Trained decoder page's "inside the circuit" part: a picker over generation, head patching and path patching."""

from __future__ import annotations

import streamlit as st

from attnlab import trained
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import segmented
from attnlab.ui.pages.decoder import paths, stepper
from attnlab.ui.pages.decoder.patching import heads_section
from attnlab.ui.pages.decoder.sections import DECODER, INSIDE


def section(model: trained.Decoder, step: int, symbols: list[str], ablate: tuple) -> None:
    """One of the three views, or none (the default: nothing is computed until asked for)."""
    st.subheader(t("patching.title"))
    st.caption(t("patching.intro"))
    kind = segmented(DECODER, "inside", t("patching.pick"), labels={k: t(f"patching.inside_{k}") for k in INSIDE})
    if kind == "generate":
        stepper.section(model, step, symbols, ablate)
    elif kind == "heads":
        heads_section(model, step, symbols)
    elif kind == "paths":
        paths.section(model, step, symbols)
