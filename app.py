"""attnlab: the router. Sets the language, lists the pages from the registry, and runs the one the URL names.

`streamlit run app.py` finds the `st.App` below and serves this same file as the script of every session,
so a session runs `route()`. The server imports the first page's modules (torch first among them) in a
background thread as soon as it starts, while the first browser is still loading the frontend.
"""

import importlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import streamlit as st

WARM_MODULES = (  # the router and the default page (views/playground.py)
    "attnlab.ui.pages",
    "attnlab.ui.shell",
    "attnlab.ui.lab",
    "attnlab.ui.stages",
    "attnlab.ui.whatif",
    "attnlab.ui.present",
)


def route() -> None:
    """One script run: page config, the app's settings, the page the URL names, the share link."""
    from attnlab.ui import pages
    from attnlab.ui.shell import about, settings, share_link

    st.set_page_config(page_title="attnlab", page_icon=":material/center_focus_strong:", layout="wide")
    settings()
    page = pages.navigation()
    about()
    page.run()
    share_link()


def warm() -> None:
    """Import what the first page needs and run its pipeline once, so the first visitor waits for neither."""
    for name in WARM_MODULES:
        importlib.import_module(name)
    from attnlab.pipeline import LabConfig, run_lab

    run_lab(LabConfig())


@asynccontextmanager
async def warm_in_background(_app: st.App) -> AsyncIterator[None]:
    """Start `warm` beside the server; it never delays the server's start or its health check."""
    threading.Thread(target=warm, name="attnlab-warm", daemon=True).start()
    yield


if __name__ == "__main__":  # a session's script run (Streamlit runs scripts as __main__, as AppTest does)
    route()
else:  # imported by `streamlit run app.py` (or uvicorn app:app) to serve
    app = st.App(__file__, lifespan=warm_in_background)
