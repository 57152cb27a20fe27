"""Cross-attention: target queries attend to source keys and values, with padding and a causal decoder."""

import streamlit as st

from attnlab.anatomy.cross import run_cross
from attnlab.ui.app import first_screen, fold, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.cross.sections import (
    PAGE,
    bottleneck_section,
    check_section,
    config,
    controls,
    cross_section,
    cut_and_hidden,
    decoder_section,
    text_status,
)
from attnlab.ui.parts import stages


def main() -> None:
    """Settings, then the decoder, the cross-attention, the bottleneck and the check."""
    st.title(t("cross.title"))
    st.caption(t("cross.intro"))
    first = PAGE.load()
    PAGE.heads_must_divide("d_model", "heads", first)
    PAGE.show_problems()
    controls()
    cfg = config()
    state.save(PAGE)
    if not text_status(cfg):
        return
    result = run_cross(cfg)
    cut_and_hidden(result)
    longest = max(len(result.source), len(result.target))
    shown = stages.head_picker(PAGE, "head", cfg.heads, longest)
    decoder_section(result, shown)
    first_screen.rest(lambda: later(result, shown))  # a new visitor's browser draws the decoder's two charts first


def later(result, shown: tuple[int, ...]) -> None:
    """The cross-attention, then the bottleneck and the check, folded until opened."""
    cross_section(result, shown)
    with fold.section(PAGE, "bottleneck", f"4. {t('cross.bottleneck_title')}") as drawn:
        if drawn:  # below the fold, drawn once opened (issue 61)
            bottleneck_section(result)
    with fold.section(PAGE, "check", f"5. {t('cross.check_title')}") as drawn:
        if drawn:
            check_section(result)


main()
