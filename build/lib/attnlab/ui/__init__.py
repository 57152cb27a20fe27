"""The Streamlit layer in three kinds: `app` (machinery), `parts` (shared by pages), `pages` (one package a page)."""
