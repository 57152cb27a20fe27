"""attnlab on Streamlit Community Cloud: point the deployment at this file; it serves the same app as app.py.

Community Cloud runs `streamlit run cloud/streamlit_app.py` from the repository's root and installs the
requirements.txt beside this file (it looks in the entry point's folder first): the repository's pins with
PyTorch's CPU-only wheel. Streamlit puts only this folder on sys.path, so the repository's root is added for
`attnlab`; the pages are found from the registry's absolute paths, so they resolve from here too. The rest is
app.py's: the same router, pages, URLs and warm-up.
"""

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from attnlab.ui.app.router import route, warm_in_background  # noqa: E402  (needs ROOT on sys.path)

if __name__ == "__main__":  # a session's script run
    route()
else:  # imported by `streamlit run cloud/streamlit_app.py` to serve
    app = st.App(__file__, lifespan=warm_in_background)
