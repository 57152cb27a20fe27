"""What every page shares: the language (link or browser) and its switch, the share box, the notebook, the about box."""

from __future__ import annotations

import urllib.parse

import streamlit as st

from attnlab.figures import palette
from attnlab.figures.palette import PALETTES
from attnlab.ui.app import courselink, fold, registry, toolbar, touch
from attnlab.ui.app.i18n import LANG_NAMES, lang_for, t
from attnlab.ui.app.state import APP
from attnlab.ui.app.widgets import segmented


def browser_language() -> None:
    """With no `lang` in the link, a session starts in its browser's language (zh* gives 中文); the link still wins.

    Set once, before the link is read: `APP.load` keeps a value already there, and every page then writes the
    language into the link (`state.save`), so the address bar names it from the first run on.
    """
    if "lang" not in st.query_params:
        st.session_state.setdefault(APP.key("lang"), lang_for(st.context.locale))


def settings() -> None:
    """Take the app's settings (language, palette) from the link once per session, draw their switches, and send the
    scripts that give every chart's toolbar its SVG button (`toolbar`) and a phone's swipes past the charts that pick
    (`touch`)."""
    browser_language()
    APP.load()
    courselink.claim_problems()  # the course's link messages go to the task panel, which a phone shows
    segmented(APP, "lang", "Language · 语言", where=st.sidebar, labels=LANG_NAMES)
    labels = {name: t(f"common.palette_{name}") for name in PALETTES}
    segmented(APP, "palette", t("common.palette"), where=st.sidebar, labels=labels, help=t("common.palette_help"))
    palette.use(APP["palette"])
    APP.show_problems(where=st.sidebar)
    toolbar.svg_buttons(t("takeout.png"), t("takeout.svg"))
    touch.send()


def share_link() -> None:
    """The link to exactly this view, with a copy button: what a teacher sends to the class."""
    base = (st.context.url or "").split("?")[0].split("#")[0]
    query = urllib.parse.urlencode(st.query_params.to_dict(), quote_via=urllib.parse.quote)
    with fold.folded(st.sidebar, t("common.share_title"), "app.share_open", icon=":material/link:") as opened:
        if opened:  # drawn only when opened: the code box's highlighter is a large script every first visit would load
            st.code(f"{base}?{query}", language=None, wrap_lines=True)
            st.caption(t("common.share_help"))


def notebook_download() -> None:
    """This view as a Jupyter notebook that rebuilds the page's figures through the library, on pages with figures.

    The notebook is written on click, in its own thread, from the page and link captured now; `on_click="ignore"`
    keeps the rerun a click would start from replacing the file the browser is fetching.
    """
    from attnlab import notebook  # after the page ran: torch is loaded by then

    page = registry.current()
    try:
        notebook.recipe_of(page)
    except ValueError:
        return  # a page without figures (the lessons overview)
    query = urllib.parse.urlencode(st.query_params.to_dict(), quote_via=urllib.parse.quote)
    st.sidebar.download_button(
        t("takeout.download"),
        data=lambda: notebook.from_query(page, query),
        file_name=f"attnlab-{page or 'playground'}.ipynb",
        mime="application/x-ipynb+json",
        icon=":material/code_blocks:",
        help=t("takeout.download_help"),
        key="app.notebook",
        on_click="ignore",
    )


def about() -> None:
    """A short note on what the app is and how to share what you see."""
    with st.sidebar.expander(t("common.about_title")):
        st.markdown(t("common.about_body"))
