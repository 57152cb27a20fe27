"""KV cache: what the key/value cache costs in real models against an H100's memory, MHA, GQA, MQA, MLA and a window
on one chart, and multi-head latent attention step by step, plain and absorbed."""

import streamlit as st

from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.kv_cache import latent
from attnlab.ui.pages.kv_cache.sections import PAGE, cache_section, chart_section, controls, load


def main() -> None:
    """The model and setting, the cache and its formula, the chart, then MLA's stages."""
    st.title(t("kvcache.title"))
    st.caption(t("kvcache.intro"))
    load()
    setting = controls()
    cache_section(setting)
    chart_section(setting)
    latent.section()
    state.save(PAGE)


main()
