"""The Streamlit layer: state in the URL, translated strings, widgets. Pages import from here."""
