"""Multi-head: how d_model is cut into heads, the same W re-split, fused QKV, dropout, and PyTorch's packing."""

import streamlit as st

from attnlab.ui.app import first_screen
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.multihead.sections import PAGE, cut, every_head, later_sections, load, reshape
from attnlab.ui.parts import lab, stages


def main() -> None:
    """Ten views of one multi-head computation, all from the Playground's settings (4 to 10 fold at the largest)."""
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
    first_screen.rest(lambda: later(result, shown))  # a new visitor's browser draws section 1 first


def later(result, shown: tuple[int, ...]) -> None:
    """The reshape and every head, then sections 4 to 10, folded until opened."""
    reshape(result, shown)
    every_head(result, shown)
    later_sections(result, shown)


main()
