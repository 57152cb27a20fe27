"""attnlab: the router. Sets the language, lists the pages, and runs the one the URL names."""

import streamlit as st

from attnlab.ui.i18n import t
from attnlab.ui.shell import about, language_switch, load_language

st.set_page_config(page_title="attnlab", page_icon=":material/center_focus_strong:", layout="wide")
load_language()
language_switch()

pages = {
    t("nav.explore"): [
        st.Page("views/playground.py", title=t("nav.playground"), icon=":material/grid_on:", url_path="playground", default=True),
        st.Page("views/multihead.py", title=t("multihead.nav"), icon=":material/view_column:", url_path="multihead"),
        st.Page("views/cross_attention.py", title=t("cross.nav"), icon=":material/compare_arrows:", url_path="cross"),
        st.Page("views/neuron.py", title=t("neuron.nav"), icon=":material/hub:", url_path="neuron"),
    ],
    t("lessons.section"): [
        st.Page("views/lessons.py", title=t("lessons.nav_title"), icon=":material/school:", url_path="lessons"),
        st.Page("views/lesson_dictionary.py", title=t("lesson_dictionary.title"), icon=":material/menu_book:", url_path="soft-dictionary"),
        st.Page("views/lesson_scaling.py", title=t("lesson_scaling.title"), icon=":material/square_foot:", url_path="scaling"),
        st.Page("views/lesson_positions.py", title=t("lesson_positions.title"), icon=":material/format_list_numbered:", url_path="positions"),
        st.Page("views/lesson_masking.py", title=t("lesson_masking.title"), icon=":material/visibility_off:", url_path="masking"),
        st.Page("views/lesson_cost.py", title=t("lesson_cost.title"), icon=":material/speed:", url_path="cost"),
    ],
    t("benchmark.section"): [
        st.Page("views/benchmark.py", title=t("benchmark.nav"), icon=":material/timer:", url_path="benchmark"),
        st.Page("views/tiled.py", title=t("tiled.nav"), icon=":material/grid_view:", url_path="tiled"),
    ],
}
page = st.navigation(pages, position="top")
about()
page.run()
