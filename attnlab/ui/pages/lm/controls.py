"""The Language model page's first controls: which model, and the text it reads.

Switching models keeps a text the user typed and swaps a first text for the new model's own; the checkpoint goes
back to the last one (another model has other checkpoints).
"""

from __future__ import annotations

import streamlit as st

from attnlab.links.lm import LAST, SHIPPED, offered
from attnlab.lm import LanguageModel
from attnlab.lmlab.texts import first_text
from attnlab.ui.app.i18n import current_lang, t
from attnlab.ui.app.widgets import segmented
from attnlab.ui.pages.lm.model import LM

LAST_MODEL = "lm._model_before"  # the model before a switch: whose first text may be on screen


def text_of(name: str) -> str:
    """A model's first text: its own language for a shipped run, the session's for another model."""
    return first_text(name if name in SHIPPED else current_lang())


def switched() -> None:
    """After a switch: the new model's first text if the old one's was on screen; its last checkpoint."""
    before = st.session_state.get(LAST_MODEL, LM["model"])
    if LM["text"] == text_of(before):
        LM["text"] = text_of(LM["model"])
    LM["step"], LM["q"], LM["gen"] = LAST, 0, 0


def model_picker() -> None:
    """The shipped runs and any model this server offers."""
    names = offered()
    labels = {name: t(f"lm.model_{name}") if name in SHIPPED else name for name in names}
    st.session_state[LAST_MODEL] = LM["model"]
    segmented(
        LM, "model", t("lm.model"), options=names, labels=labels, on_change=switched, help=t("lm.model_pick_help")
    )


def text_box(lm: LanguageModel) -> None:
    """The text, several lines allowed (a poem, a passage)."""
    st.text_area(
        t("lm.text"),
        key=LM.key("text"),
        height=96,
        help=t("lm.text_help", cap=lm.max_len - 1),
        persist_state="session",
    )
