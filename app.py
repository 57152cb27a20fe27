"""attnlab: the router. Sets the language, lists the pages, and runs the one the URL names."""

import streamlit as st

from attnlab.ui.i18n import t
from attnlab.ui.shell import about, language_switch, load_language

st.set_page_config(page_title="attnlab", page_icon="🔎", layout="wide")
load_language()
language_switch()

pages = {
    t("nav.explore"): [
        st.Page("pages/playground.py", title=t("nav.playground"), icon="🧮", url_path="playground", default=True),
    ],
}
page = st.navigation(pages)
about()
page.run()
