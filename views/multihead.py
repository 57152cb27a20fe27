"""Multi-head: how d_model is cut into heads, the same W re-split, fused QKV, dropout, and PyTorch's packing."""

import streamlit as st

from attnlab.ui.app.i18n import t
from attnlab.ui.pages.multihead.grouped import grouped_section
from attnlab.ui.pages.multihead.sections import (
    PAGE,
    concat_section,
    cut,
    dropout_section,
    every_head,
    full_size_section,
    fused_section,
    load,
    reshape,
    resplit_section,
    torch_section,
)
from attnlab.ui.parts import lab, stages


def main() -> None:
    """Nine views of one multi-head computation, all from the Playground's settings."""
    st.title(t("multihead.title"))
    st.caption(t("multihead.intro"))
    load()
    lab.controls()
    PAGE.fit_heads("d_model", "cmp", d_state=lab.LAB)
    result = lab.compute(classic_only=True)  # nn.MultiheadAttention's attention: the Playground shows the rest
    lab.save(PAGE)
    if not lab.text_status(result):
        return
    shown = stages.head_picker(lab.LAB, "head", result.steps.n_heads, len(result.tokens))
    cut(result)
    reshape(result, shown)
    every_head(result, shown)
    resplit_section(result)
    concat_section(result)
    fused_section(result)
    run = dropout_section(result, shown)
    torch_section(run)
    full_size_section(len(result.tokens))
    grouped_section(result, PAGE)


main()
