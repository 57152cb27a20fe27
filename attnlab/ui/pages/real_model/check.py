"""The Real model page's check: our forward pass against transformers' BertModel and SentenceTransformer.

The references are imported and loaded only when a check is asked for, once per server process; each checked
text's result is numbers shared by every session (the same text gives the same figures).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnlab.pretrained import MAX_TOKENS, EncoderRun
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.real_model.real import RUNS_KEPT, run_of


@st.cache_resource(show_spinner=False)
def references() -> object:
    """transformers' BertModel and sentence-transformers, imported and loaded only when a check is asked for."""
    from attnlab.pretrained.reference import load_references

    return load_references(MAX_TOKENS)


@st.cache_resource(show_spinner=False, max_entries=RUNS_KEPT)
def checked(text: str) -> object:
    """Our run of one text against both references (shared: the same text gives the same figures)."""
    from attnlab.pretrained.reference import check_run

    return check_run(references(), run_of(text), MAX_TOKENS)


def check_panel(run: EncoderRun) -> None:
    """Always in the sidebar: our forward pass against BertModel and SentenceTransformer, run on request."""
    box = st.sidebar.container(border=True)
    box.markdown(f"**{t('real.check_title')}**")
    asked = st.session_state.get("real.check_asked", False)
    if not asked:
        box.caption(t("real.check_why_button"))
        if box.button(t("real.check_run"), key="real.check_button", icon=":material/fact_check:"):
            st.session_state["real.check_asked"] = True
            st.rerun()
        return
    with box, st.spinner(t("real.check_running")):
        result = checked(run.text)
    verdict = t("lab.check_pass") if result.passed else t("lab.check_fail")
    (box.success if result.passed else box.error)(
        verdict, icon=":material/check_circle:" if result.passed else ":material/error:"
    )
    rows = [
        (t("real.check_attention"), f"{result.attention_err:.1e}", f"≤ {result.attention_bound:.1e}"),
        (t("real.check_hidden"), f"{result.hidden_err:.1e}", f"≤ {result.hidden_bound:.1e}"),
        (t("real.check_cosine"), f"{result.cosine:.7f}", f"≥ {result.min_cosine}"),
    ]
    box.dataframe(
        pd.DataFrame(rows, columns=[t("lab.check_where"), t("real.check_value"), t("real.check_bound")]),
        hide_index=True,
        width="stretch",
    )
    if not result.tokens_match:
        box.warning(t("real.check_tokens_differ"))
    box.caption(t("real.check_caption"))
