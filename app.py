"""attnlab: the entry point. Serves the router (`attnlab/ui/app/router.py`): settings, pages, the one the URL names.

`streamlit run app.py` finds the `st.App` below and serves this same file as the script of every session,
so a session runs `route()`. While the first browser is still loading the frontend, the server imports the
first page's modules (torch first among them) on otherwise idle CPU (`attnlab.ui.app.warmup`), and every run
opens by asking the browser to load the chart library (`attnlab.ui.app.preload`). Community Cloud's entry
point, `cloud/streamlit_app.py`, is these same lines.
"""

import streamlit as st

from attnlab.ui.app.router import route, warm_in_background

if __name__ == "__main__":  # a session's script run (Streamlit runs scripts as __main__, as AppTest does)
    route()
else:  # imported by `streamlit run app.py` (or uvicorn app:app) to serve
    app = st.App(__file__, lifespan=warm_in_background)
