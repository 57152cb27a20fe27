"""What every page shares: the language switch (synced with `?lang=`) and the about box."""

from __future__ import annotations

import urllib.parse

import streamlit as st

from attnlab.params import Invalid, choice
from attnlab.ui.i18n import LANG_NAMES, LANGS, t
from attnlab.ui.state import url_problem
from attnlab.ui.widgets import keep_choice


def load_language() -> None:
    """Once per session: take the language from `?lang=` (en or zh), saying so if it is neither."""
    if "_loaded.lang" in st.session_state:
        return
    st.session_state["_loaded.lang"] = True
    raw = st.query_params.get("lang")
    lang = "en"
    if raw is not None:
        try:
            lang = choice(LANGS, "en")(raw)
        except Invalid as bad:
            st.session_state["_lang_problem"] = (raw, bad)
    st.session_state.setdefault("lang", lang)


def language_switch() -> None:
    """The sidebar's English / 中文 switch."""
    keep_choice("lang", LANGS, "en")
    st.sidebar.segmented_control(
        "Language · 语言",
        LANGS,
        format_func=LANG_NAMES.get,
        key="lang",
        required=True,
        persist_state="session",
    )
    problem = st.session_state.get("_lang_problem")
    if problem:
        st.sidebar.warning(url_problem("lang", *problem), icon=":material/warning:")


def share_link() -> None:
    """The link to exactly this view, with a copy button: what a teacher sends to the class."""
    base = (st.context.url or "").split("?")[0].split("#")[0]
    query = urllib.parse.urlencode(st.query_params.to_dict(), quote_via=urllib.parse.quote)
    with st.sidebar.expander(t("common.share_title"), icon=":material/link:"):
        st.code(f"{base}?{query}", language=None, wrap_lines=True)
        st.caption(t("common.share_help"))


def about() -> None:
    """A short note on what the app is and how to share what you see."""
    with st.sidebar.expander(t("common.about_title")):
        st.markdown(t("common.about_body"))
