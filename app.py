"""attnlab: the router. Sets the language, lists the pages from the registry, and runs the one the URL names."""

import streamlit as st

from attnlab.ui import pages
from attnlab.ui.shell import about, settings, share_link

st.set_page_config(page_title="attnlab", page_icon=":material/center_focus_strong:", layout="wide")
settings()
page = pages.navigation()
about()
page.run()
share_link()
