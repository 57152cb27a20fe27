"""attnlab: the router. Sets the language, lists the pages, and runs the one the URL names."""

import streamlit as st

from attnlab.ui.i18n import t
from attnlab.ui.shell import about, language_switch, load_language, share_link


def view(file: str, title: str, icon: str, url_path: str, **kw) -> st.Page:
    """One page of views/, its title translated and its icon from Material Symbols."""
    return st.Page(f"views/{file}.py", title=t(title), icon=f":material/{icon}:", url_path=url_path, **kw)


st.set_page_config(page_title="attnlab", page_icon=":material/center_focus_strong:", layout="wide")
load_language()
language_switch()

pages = {
    t("nav.explore"): [
        view("playground", "nav.playground", "grid_on", "playground", default=True),
        view("multihead", "multihead.nav", "view_column", "multihead"),
        view("cross_attention", "cross.nav", "compare_arrows", "cross"),
        view("neuron", "neuron.nav", "hub", "neuron"),
    ],
    t("lessons.section"): [
        view("lessons", "lessons.nav_title", "school", "lessons"),
        view("lesson_dictionary", "lesson_dictionary.title", "menu_book", "soft-dictionary"),
        view("lesson_scaling", "lesson_scaling.title", "square_foot", "scaling"),
        view("lesson_positions", "lesson_positions.title", "format_list_numbered", "positions"),
        view("lesson_masking", "lesson_masking.title", "visibility_off", "masking"),
        view("lesson_cost", "lesson_cost.title", "speed", "cost"),
    ],
    t("benchmark.section"): [
        view("benchmark", "benchmark.nav", "timer", "benchmark"),
        view("tiled", "tiled.nav", "grid_view", "tiled"),
    ],
}
page = st.navigation(pages, position="top")
about()
page.run()
share_link()
