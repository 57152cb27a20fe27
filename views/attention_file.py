"""Attention file: attention from any model (a file attnlab.attnfile saved, or a bundled example), every view."""

import streamlit as st

from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.attention_file import sections as attnfile_views
from attnlab.ui.pages.attention_file import source as attnfile
from attnlab.ui.parts import inspector


def main() -> None:
    """Where the file comes from, what it holds and its download, then the chosen view (the shared inspector's)."""
    st.title(t("attnfile.title"))
    st.caption(t("attnfile.intro"))
    attnfile.load()
    attnfile.PAGE.show_problems()
    got = attnfile.opened()
    views = attnfile.views_for(got[0]) if got is not None else ()
    if got is not None:
        attnfile_views.fit(got[0], views)
    state.save(attnfile.PAGE)
    if got is None:
        return
    file, digest, kind = got
    attnfile.summary(file, kind)
    attnfile.download(file)
    view = attnfile_views.view_picker(views)
    inspector.draw(view, attnfile_views.shown(file, digest))


main()
