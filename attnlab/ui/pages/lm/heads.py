"""Every head: the model view of the text's reading, the head finder's four scores beside it, the copy test.

When switched on, which heads push the prediction (`attribution`) comes under the two.

The copy test writes the text twice: is the second copy predicted better than the first?

The model view is `attnlab.ui.parts.inspector`'s, on the reading as an attention source (a click on a map picks
that head for the stages and the cache view below). The scores are `attnlab.lmlab.finder`'s, on the same
weights; a score the text cannot show (no line period, nothing repeated) is said, not drawn.
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from attnlab.figures import matrix_figure
from attnlab.figures.screen import share as screen_share
from attnlab.lm import LanguageModel
from attnlab.lmlab.finder import SCORES, head_scores
from attnlab.lmlab.reading import Reading, copies
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import markdown_table
from attnlab.ui.app.widgets import chart
from attnlab.ui.pages.lm import attribution
from attnlab.ui.pages.lm.model import LM, run_numbers
from attnlab.ui.parts.inspector import Shown, model_view

SCORES_KEPT = 32  # texts whose head scores a server keeps ((4, L, H) numbers each)
CLEAR = 0.1  # nats per character: a smaller gap between the copies is said to be no difference


@st.cache_data(show_spinner=False, max_entries=SCORES_KEPT)
def scores(digest: str, _got: Reading) -> dict[str, np.ndarray | None]:
    """The four scores of every head, (L, H) each or None (numbers only, shared by every session)."""
    got = head_scores(_got.attentions, _got.pieces, _got.lead)
    return {k: None if v is None else v.numpy() for k, v in got.items()}


def digest(step: int | None, got: Reading) -> str:
    """What names a reading's numbers: the model, its checkpoint and the text's ids."""
    ids = ",".join(map(str, got.ids)).encode()
    return f"lm:{LM['model']}:{step}:{hashlib.sha256(ids).hexdigest()}"


def shown(step: int | None, got: Reading) -> Shown:
    """The reading as the shared inspector draws it, in this page's state and words."""
    return Shown(LM, "lm", got.source(), digest(step, got))


def section(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The model view and the scores side by side (stacked on a phone), then the copy test."""
    st.subheader(t("lm.heads_title"))
    on_screen = shown(step, got)
    left, right = st.columns([3, 2])
    with left:
        model_view(on_screen)
    grids = scores(on_screen.digest, got)
    with right, screen_share(2 / 5):  # the scores' grid laid out for its column
        score_grids(grids, lm)
        pushed = attribution.switch()
    if pushed:
        attribution.section(lm, step, got, grids)
    copy_test(lm, got)


def score_grids(grids: dict[str, np.ndarray | None], lm: LanguageModel) -> None:
    """The strongest head of every score the text can show, then one score's layers x heads grid."""
    have = [k for k in SCORES if grids[k] is not None]
    st.caption(t("lm.scores_help"))
    rows = []
    for k in have:
        layer, head = np.unravel_index(int(np.argmax(grids[k])), grids[k].shape)
        rows.append((t(f"lm.score_{k}"), f"{layer + 1}.{head + 1}", f"{grids[k][layer, head]:.2f}"))
    if rows:
        st.markdown(markdown_table((t("lm.score_pick"), t("lm.strongest"), t("lm.score_axis")), rows))
        labels = {k: t(f"lm.score_{k}") for k in have}
        kind = st.radio(t("lm.score_pick"), have, format_func=labels.get, key="lm.score_grid", horizontal=True)
        kind = kind if kind in have else have[0]
        layers = [f"{t('lm.layer')} {i + 1}" for i in range(lm.n_layers)]
        heads = [str(h + 1) for h in range(lm.n_heads)]
        figure = matrix_figure(
            grids[kind],
            layers,
            heads,
            kind="prob",
            text=True,
            title=t(f"lm.score_{kind}"),
            row_name=t("lm.layer"),
            col_name=t("lm.head"),
        )
        chart(figure, LM.key("scores"))
    for k in SCORES:
        if grids[k] is None:
            st.caption(t(f"lm.score_{k}_missing"))


def twice() -> None:
    """The text written twice (the button's callback, before the text box is drawn)."""
    LM["text"] = LM["text"] + LM["text"]
    LM["q"], LM["gen"] = 0, 0


def copy_test(lm: LanguageModel, got: Reading) -> None:
    """The button, and for a text written twice the two copies' losses; the run's own copy measures beside them."""
    st.markdown(f"**{t('lm.copy_title')}**")
    fits = 2 * (got.n_tokens - got.lead) + got.lead <= lm.max_len and not got.cut
    st.button(t("lm.twice"), on_click=twice, icon=":material/content_copy:", disabled=not fits, key="lm.twice")
    pair = copies(got)
    if pair is None:
        st.caption(t("lm.twice_help") if fits else t("lm.twice_too_long", cap=lm.max_len))
    else:
        first, second = pair
        cols = st.columns(3)
        cols[0].metric(t("lm.copy_first"), f"{first:.2f}")
        cols[1].metric(t("lm.copy_second"), f"{second:.2f}", delta=f"{second - first:+.2f}", delta_color="inverse")
        cols[2].metric(t("lm.copy_ratio"), f"{np.exp(first - second):.1f}×")
        gap = first - second
        said = "lm.copy_better" if gap >= CLEAR else "lm.copy_not" if gap <= -CLEAR else "lm.copy_same"
        st.markdown(t(said, a=f"{first:.2f}", b=f"{second:.2f}", clear=CLEAR))
    m = run_numbers(lm)
    if m is not None and "copy_loss_first" in m:
        st.caption(
            t(
                "lm.copy_run",
                a=f"{m['copy_loss_first']:.2f}",
                b=f"{m['copy_loss_second']:.2f}",
                c=f"{m['copy_passage_first']:.2f}",
                d=f"{m['copy_passage_second']:.2f}",
            )
        )
