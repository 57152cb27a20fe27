"""One head, stage by stage: the Playground's stage table on this head's real weights and the user's text.

X is the layer's input after its RMSNorm (what the head's projections read); then the table's own stages, drawn
by `attnlab.ui.parts.stages` for a `StageView` of `attnlab.lmlab.stages.layer_steps` (RoPE's before and after in
the scores, K and V on the head's key/value head and who shares it); then the head's own contribution, Z_h through
its rows of W_O. The stages are built only when their expander is opened (eleven charts of T x T).
"""

from __future__ import annotations

import streamlit as st

from attnlab.figures import dim_labels, matrix_figure
from attnlab.lm import LanguageModel
from attnlab.lmlab.reading import Reading
from attnlab.lmlab.stages import contribution, layer_inputs, layer_steps, square
from attnlab.multihead import MultiHeadSteps
from attnlab.ui.app import fold, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import chart, selectbox, shape_text, stage
from attnlab.ui.pages.lm.heads import shown
from attnlab.ui.pages.lm.model import LM, model
from attnlab.ui.parts.inspector import layer_picker, picked
from attnlab.ui.parts.stages import STAGES, StageView, draw

STEPS_KEPT = 8  # (text, layer) pairs whose stages a server keeps (each about a dozen (T, d) and (H, T, T) tensors)


@st.cache_resource(show_spinner=False, max_entries=STEPS_KEPT)
def steps_of(name: str, step: int | None, ids: tuple[int, ...], layer: int) -> MultiHeadSteps:
    """Every stage of one layer on the text, shared read-only by every session."""
    lm = model(name, step)
    return layer_steps(lm, ids, layer, layer_inputs(lm, ids)[layer])


def section(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The stages of the picked head, built only while the expander is open."""
    with fold.folded(st, t("lm.inside_title"), "lm.inside_open", icon=":material/layers:") as opened:
        if not opened:
            return
        if not square(lm):
            st.info(t("lm.not_square"), icon=":material/info:")
            return
        stages(lm, step, got)


def stages(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """Pickers, X after RMSNorm, the stage table's stages, the head's contribution through W_O."""
    on_screen = shown(step, got)
    cols = st.columns(2)
    layer_picker(on_screen, where=cols[0])
    selectbox(LM, "head", t("lm.head"), where=cols[1], options=list(range(1, lm.n_heads + 1)))
    layer, head, query, _ = picked(on_screen)  # the row outlined: the one that made the prediction picked above
    steps = steps_of(LM["model"], step, got.ids, layer)
    tokens = list(got.labels)
    cfg = lm.cfg
    st.caption(
        t(
            "lm.inside_help",
            layer=layer + 1,
            head=head + 1,
            kv=steps.kv_head(head) + 1,
            group=steps.group,
            d_k=steps.d_k,
            theta=f"{cfg.rope_theta:g}",
        )
    )
    stage(
        1,
        t("lm.x_title"),
        r"X = \mathrm{RMSNorm}(h^{(" + str(layer) + r")}) = \frac{h}{\mathrm{rms}(h)} \odot g",
        shape_text("X", ("T", "d_model"), tuple(steps.x_q.shape)),
        t("lm.x_note", layer=layer + 1),
    )
    chart(matrix_figure(steps.x_q.numpy(), tokens, dim_labels(steps.x_q.size(-1)), highlight_row=query), "lm.st.x")
    view = StageView(tokens, steps.x_q, steps, (head,), True, query, bias=cfg.qkv_bias, layer=layer)
    for spec in STAGES.values():
        if spec.name != "x":  # drawn above: the normed stream the head reads
            draw(spec, view, f"lm.st.{spec.name}")
    mine = contribution(steps, lm, layer, head)  # (T, d_model)
    st.markdown(f"#### {t('lm.contribution_title', head=head + 1)}")
    d_k = steps.d_k
    latex.show(rf"Z_{{{head + 1}}}\,W^O_{{[{head * d_k}:{(head + 1) * d_k},\,:]}}")
    st.caption(f"{shape_text('O_h', ('T', 'd_model'), tuple(mine.shape))} · {t('lm.contribution_note', h=lm.n_heads)}")
    chart(matrix_figure(mine.numpy(), tokens, dim_labels(mine.size(-1)), highlight_row=query), "lm.st.mine")
