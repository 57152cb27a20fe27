"""Lesson page (being written)."""

import streamlit as st

from attnlab.ui.i18n import t

st.title(t("lesson_positions.title"))
