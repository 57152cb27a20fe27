"""The Real model page's own parts: the shared model and runs, the token line, a real head's stages, similarity.

The views every attention source has (model, head, query-key map, finder, rollout) are the shared inspector's
(`attnlab/ui/parts/inspector.py`): this page hands it MiniLM's run as an attention source, so their shapes
come from the run. The encoder, each sentence's run and its source are `st.cache_resource` values shared by
every session, so nothing here may change them, and they hold numbers only: text and colours depend on the
session (language, palette), so every figure is built per session. The model is read only when this page
first runs in a process.
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from attnlab import links
from attnlab.attnfile import AttentionFile
from attnlab.figures import matrix_figure
from attnlab.pretrained import MAX_TOKENS, Encoder, EncoderRun, ModelMissing, load_minilm
from attnlab.pretrained.encoder import UNK, EmptyText
from attnlab.pretrained.package import INSTALL_COMMAND
from attnlab.sources import from_encoder_run
from attnlab.ui.app import latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, segmented, text_input
from attnlab.ui.parts.inspector import Shown, picked, pickers
from attnlab.ui.parts.stages import STAGES, StageView, draw

VIEWS = links.REAL_VIEWS
REAL = PageState("real", links.params("real"))
RUNS_KEPT = 64  # sentences whose runs a server keeps (each run is about 7 x T x 384 floats plus 72 T x T maps)


@st.cache_resource(show_spinner=False)
def encoder() -> Encoder:
    """all-MiniLM-L6-v2, loaded once per server process and shared read-only."""
    return load_minilm()


@st.cache_resource(show_spinner=False, max_entries=RUNS_KEPT)
def run_of(text: str) -> EncoderRun:
    """One sentence through the model, shared by every session that types it (read-only)."""
    return encoder().run(text)


@st.cache_resource(show_spinner=False, max_entries=RUNS_KEPT)
def source_of(text: str) -> AttentionFile:
    """The run as an attention source (its weights, tokens, every head's queries and keys), shared read-only."""
    return from_encoder_run(encoder(), run_of(text))


def shown(run: EncoderRun) -> Shown:
    """The run as the shared inspector draws it, in this page's state and words."""
    return Shown(REAL, "real", source_of(run.text), "real:" + hashlib.sha256(run.text.encode()).hexdigest())


def fit_link(first: bool) -> None:
    """On a session's first load, a layer or head the link asks for past the model's own is replaced and said."""
    if not first:
        return
    try:
        model = encoder()
    except ModelMissing:
        return  # said where the model is asked for
    REAL.rebound("layer", model.n_layers)
    REAL.rebound("head", model.n_heads)


def load() -> Encoder | None:
    """The model, or a message saying how to install it."""
    try:
        return encoder()
    except ModelMissing as missing:
        st.error(t("real.missing", command=code(INSTALL_COMMAND)), icon=":material/download:")
        st.caption(t("common.library_said", detail=code(str(missing), 300)))
        return None


def sentence(text_key: str = "text") -> EncoderRun | None:
    """The run of a text box's sentence, saying when it is empty, cut at the cap, or unknown to the model."""
    try:
        run = run_of(REAL[text_key])
    except EmptyText:
        st.info(t("real.empty"), icon=":material/edit:")
        return None
    if run.truncated:
        st.warning(t("real.truncated", n=run.full_length, cap=MAX_TOKENS), icon=":material/content_cut:")
    unknown = sum(run.unknown)
    if unknown and unknown == run.n_tokens - 2:
        st.warning(t("real.all_unknown"), icon=":material/translate:")
    elif unknown:
        st.info(t("real.some_unknown", n=unknown), icon=":material/translate:")
    return run


def token_line(run: EncoderRun) -> None:
    """The model's own tokens, each as inert text, [UNK] marked with a question-mark icon."""
    parts = [f":material/help:{code(tok)}" if tok == UNK else code(tok) for tok in run.tokens]
    st.markdown(t("real.tokens", n=run.n_tokens) + " " + " ".join(parts))


def fit_query(run: EncoderRun) -> None:
    """A followed query past the last token (a link made for a longer sentence) follows every query instead."""
    if REAL["q"] > run.n_tokens:
        REAL["q"] = 0


def stages_view(model: Encoder, run: EncoderRun) -> None:
    """Every stage of the chosen real head with the Playground's renderer, then where its output goes."""
    on_screen = shown(run)
    pickers(on_screen)
    layer, head, query, _ = picked(on_screen)
    steps = model.layer_steps(run, layer)
    tokens = list(run.tokens)
    view = StageView(tokens, steps.x, steps.attention, (head,), False, query, bias=True, layer=layer)
    st.caption(t("real.stages_help", layer=layer + 1, head=head + 1, d_k=model.d_k))
    for spec in STAGES.values():
        draw(spec, view, f"real.st.{spec.name}")
    after = [
        ("attention_norm", steps.attention_norm, r"A = \mathrm{LayerNorm}(X + \mathrm{Output})"),
        ("ffn_activation", steps.ffn_activation, r"F = \mathrm{GELU}(A\,W_1 + b_1)"),
        ("output", steps.output, r"Y = \mathrm{LayerNorm}(A + F\,W_2 + b_2)"),
    ]
    for offset, (key, matrix, formula) in enumerate(after, start=len(STAGES) + 1):
        st.markdown(f"#### {offset}. {t(f'real.after_{key}')}")
        latex.show(formula)
        st.caption(f"`({run.n_tokens}, {matrix.size(-1)})` · {t(f'real.after_{key}_note')}")
        cols = [f"d{i}" for i in range(matrix.size(-1))]
        chart(
            matrix_figure(matrix.numpy(), tokens, cols, highlight_row=query, row_name=t("stages.token")),
            f"real.after.{key}",
        )


def similarity_view(run: EncoderRun) -> None:
    """A second sentence, both embeddings and their cosine."""
    text_input(REAL, "text_b", t("real.text_b"))
    other = sentence("text_b")
    if other is None:
        return
    cosine = float(run.embedding @ other.embedding)  # both are unit vectors
    st.metric(t("real.cosine"), f"{cosine:.4f}")
    both = np.stack([run.embedding.numpy(), other.embedding.numpy()])  # (2, 384)
    chart(
        matrix_figure(
            both,
            [t("real.sentence_a"), t("real.sentence_b")],
            [f"d{i}" for i in range(both.shape[1])],
            row_name=t("real.sentence"),
            col_name=t("stages.dim"),
            text=False,
        ),
        "real.embeddings",
    )
    st.caption(t("real.similarity_help"))


def view_picker() -> str:
    """Which view of the run is on screen."""
    labels = {v: t(f"real.view_{v}") for v in VIEWS}
    return segmented(REAL, "view", t("real.view"), labels=labels)
