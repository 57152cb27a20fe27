"""The page registry: every page's file, title, icon, address and section, written once.

The router (`app.py`), the lessons overview and every link between pages read this table, so a
page is added, renamed or moved in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attnlab import appfiles
from attnlab.ui.app.i18n import current_lang, t

# Streamlit resolves a relative page path against the script it runs, so an entry point in another folder
# (cloud/streamlit_app.py) would look for views/ there: every page is given by its absolute path instead.
VIEWS = appfiles.views()


@dataclass(frozen=True)
class PageSpec:
    """One page: `views/<file>.py`, its title `nav.<file>`, a Material Symbols icon, its URL path and section."""

    file: str
    icon: str
    url_path: str
    section: str  # nav.section_<section> names the navigation group
    lesson: str | None = None  # for a lesson of the course: its slug (locale file lesson_<slug>.toml)

    @property
    def path(self) -> str:
        """The script Streamlit runs for this page."""
        return f"views/{self.file}.py"

    @property
    def script(self) -> str:
        """The view's absolute path, the same from every entry point (app.py, cloud/, a wheel's copy)."""
        return str(VIEWS / f"{self.file}.py")

    @property
    def title(self) -> str:
        """The page's name in the navigation, in the current language."""
        return t(f"nav.{self.file}")


PAGES: tuple[PageSpec, ...] = (
    PageSpec("playground", "grid_on", "playground", "explore"),
    PageSpec("present", "co_present", "present", "explore"),
    PageSpec("multihead", "view_column", "multihead", "explore"),
    PageSpec("cross", "compare_arrows", "cross", "explore"),
    PageSpec("neuron", "hub", "neuron", "explore"),
    PageSpec("real_model", "psychology", "real-model", "explore"),
    PageSpec("lm", "edit_note", "lm", "explore"),
    PageSpec("decoder", "model_training", "decoder", "explore"),
    PageSpec("attention_file", "upload_file", "attention-file", "explore"),
    PageSpec("course", "school", "course", "lessons"),
    PageSpec("lessons", "auto_stories", "lessons", "lessons"),
    PageSpec("soft_dictionary", "menu_book", "soft-dictionary", "lessons", lesson="dictionary"),
    PageSpec("scaling", "square_foot", "scaling", "lessons", lesson="scaling"),
    PageSpec("positions", "format_list_numbered", "positions", "lessons", lesson="positions"),
    PageSpec("rope", "rotate_right", "rope", "lessons", lesson="rope"),
    PageSpec("masking", "visibility_off", "masking", "lessons", lesson="masking"),
    PageSpec("cost", "speed", "cost", "lessons", lesson="cost"),
    PageSpec("benchmark", "timer", "benchmark", "performance"),
    PageSpec("tiled", "grid_view", "tiled", "performance"),
    PageSpec("kv_cache", "memory", "kv-cache", "performance"),
)
BY_FILE = {spec.file: spec for spec in PAGES}
CURRENT = "app.page"  # session-state key: the URL path of the page this run shows
PAGES_BUILT = "app.pages"  # session-state key: the router's pages, per language
COURSE: tuple[PageSpec, ...] = tuple(spec for spec in PAGES if spec.lesson)


def st_page(spec: PageSpec) -> st.Page:
    """The Streamlit page of a registry entry; the first page of the registry is the default one."""
    return st.Page(
        spec.script,
        title=spec.title,
        icon=f":material/{spec.icon}:",
        url_path=spec.url_path,
        default=spec is PAGES[0],
    )


def session_sections(lang: str) -> dict[str, list[st.Page]]:
    """The router's pages by section in `lang`, built once per session and language: a page resolves its script's
    path on disk when built (a fifth of a live-class student's rerun). Kept per session, never shared: the router
    marks the page it runs on the page object itself."""
    built = st.session_state.setdefault(PAGES_BUILT, {})
    if lang not in built:
        sections: dict[str, list[st.Page]] = {}
        for spec in PAGES:
            sections.setdefault(t(f"nav.section_{spec.section}"), []).append(st_page(spec))
        built[lang] = sections
    return built[lang]


def navigation() -> st.Page:
    """The router over every page, grouped by section in registry order, along the top of the app.

    The page this run shows is kept under `CURRENT` (its URL path, "" for the Playground): chart file names and
    the notebook download say which page they come from.
    """
    page = st.navigation(session_sections(current_lang()), position="top")
    st.session_state[CURRENT] = page.url_path
    return page


def current() -> str:
    """The URL path of the page this run shows ("" for the Playground, the default page)."""
    return st.session_state.get(CURRENT, "")


def link(file: str, label: str, icon: str = "arrow_forward") -> None:
    """A link to a registered page: to its address (/<url_path>), which the router serves."""
    st.page_link(st_page(BY_FILE[file]), label=label, icon=f":material/{icon}:")
