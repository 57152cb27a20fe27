"""attnlab: the router. Sets the language, lists the pages from the registry, and runs the one the URL names.

`streamlit run app.py` finds the `st.App` below and serves this same file as the script of every session,
so a session runs `route()`. While the first browser is still loading the frontend, the server imports the
first page's modules (torch first among them) on otherwise idle CPU (`attnlab.ui.app.warmup`), and every run
opens by asking the browser to load the chart library (`attnlab.ui.app.preload`).
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import streamlit as st


def route() -> None:
    """One script run: page config, the chart library's preload, the settings, the page, its link and notebook."""
    from attnlab.ui.app import preload

    st.set_page_config(page_title="attnlab", page_icon=":material/center_focus_strong:", layout="wide")
    preload.charts()  # before anything that may wait for torch
    from attnlab.ui.app import registry as pages
    from attnlab.ui.app.shell import about, notebook_download, settings, share_link

    settings()
    page = pages.navigation()
    about()
    page.run()
    share_link()
    notebook_download()


@asynccontextmanager
async def warm_in_background(_app: st.App) -> AsyncIterator[None]:
    """Warm the first page's imports beside the server (`attnlab.ui.app.warmup`)."""
    from attnlab.ui.app import warmup

    warmup.start()
    yield


if __name__ == "__main__":  # a session's script run (Streamlit runs scripts as __main__, as AppTest does)
    route()
else:  # imported by `streamlit run app.py` (or uvicorn app:app) to serve
    app = st.App(__file__, lifespan=warm_in_background)
