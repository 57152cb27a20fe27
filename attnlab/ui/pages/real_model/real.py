"""The Real model page's parts: the shared model and runs, the token line, and one function per view.

The encoder, each sentence's run and its pooled overview are `st.cache_resource` values shared by every
session, so nothing here may change them, and they hold numbers only: text and colours depend on the
session (language, palette), so every figure is built per session. The model is read only when this page
first runs in a process.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attnlab.figures import matrix_figure
from attnlab.figures.pretrained import head_lines_figure, model_view_figure, thumbnail_levels
from attnlab.params import choice_param, int_param, text_param
from attnlab.pretrained import MAX_TOKENS, Encoder, EncoderRun, ModelMissing, head_scores, load_minilm
from attnlab.pretrained import rollout as rollout_of
from attnlab.pretrained.encoder import UNK, EmptyText
from attnlab.pretrained.package import INSTALL_COMMAND
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, segmented, selectbox, text_input
from attnlab.ui.parts.headviews import head_finder, model_view_chart, rollout_charts
from attnlab.ui.parts.stages import STAGES, StageView, draw

N_LAYERS, N_HEADS = 6, 12  # all-MiniLM-L6-v2; the page checks the loaded model against these
VIEWS = ("model", "head", "stages", "finder", "rollout", "similarity", "qk")
REAL = PageState(
    "real",
    (
        text_param("text", "The animal didn't cross the street because it was too tired."),
        int_param("layer", 1, 1, N_LAYERS),
        int_param("head", 1, 1, N_HEADS),
        choice_param("view", "model", VIEWS),
        int_param("q", 0, 0, MAX_TOKENS),  # 0: every query; k: the k-th token's row
        text_param("text_b", "The tired animal stayed on this side of the road."),
    ),
)
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
def overview_levels(text: str) -> np.ndarray:
    """The 72 maps of one run pooled to thumbnails (read-only numbers; colours and labels are added per session)."""
    levels = thumbnail_levels(run_of(text).attentions.numpy())  # (L, H, side, side)
    levels.setflags(write=False)
    return levels


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


def picked(run: EncoderRun) -> tuple[int, int, int | None]:
    """Layer and head (0-based) and the followed query row, if it is inside this run."""
    q = REAL["q"]
    return REAL["layer"] - 1, REAL["head"] - 1, (q - 1 if 1 <= q <= run.n_tokens else None)


def layer_picker(where: object = st) -> None:
    """Layers 1..6."""
    selectbox(REAL, "layer", t("real.layer"), where=where, options=list(range(1, N_LAYERS + 1)))


def layer_head_pickers(run: EncoderRun) -> None:
    """Layer, head and the query to follow, side by side."""
    left, middle, right = st.columns(3)
    layer_picker(where=left)
    selectbox(REAL, "head", t("real.head"), where=middle, options=list(range(1, N_HEADS + 1)))
    queries = {0: t("real.every_query")} | {i + 1: f"{i + 1}: {tok}" for i, tok in enumerate(run.tokens)}
    selectbox(REAL, "q", t("real.query"), where=right, options=list(queries), labels=queries)


def model_view(run: EncoderRun) -> None:
    """All 72 heads at once, in this session's language and palette; a click on one opens it."""
    layer, head, _ = picked(run)
    st.caption(t("real.model_help"))
    levels = overview_levels(run.text)
    model_view_chart(
        REAL, model_view_figure(run.attentions.numpy(), t("real.layer"), t("real.head"), (layer, head), levels)
    )


def head_view(run: EncoderRun) -> None:
    """The chosen head's weights as a heatmap and as lines between tokens."""
    layer_head_pickers(run)
    layer, head, query = picked(run)
    weights = run.attentions[layer, head].numpy()  # (T, T)
    name = t("real.head_title", layer=layer + 1, head=head + 1)
    left, right = st.columns([3, 2])
    with left:
        tokens = list(run.tokens)
        chart(
            matrix_figure(
                weights,
                tokens,
                tokens,
                kind="prob",
                title=name,
                highlight_row=query,
                row_name=t("stages.query"),
                col_name=t("stages.key"),
            ),
            "real.head_map",
        )
    with right:
        chart(head_lines_figure(weights, run.tokens, query, t("real.lines_title")), "real.head_lines")
    st.caption(t("real.lines_help"))


def stages_view(model: Encoder, run: EncoderRun) -> None:
    """Every stage of the chosen real head with the Playground's renderer, then where its output goes."""
    layer_head_pickers(run)
    layer, head, query = picked(run)
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
        st.latex(formula)
        st.caption(f"`({run.n_tokens}, {matrix.size(-1)})` · {t(f'real.after_{key}_note')}")
        cols = [f"d{i}" for i in range(matrix.size(-1))]
        chart(
            matrix_figure(matrix.numpy(), tokens, cols, highlight_row=query, row_name=t("stages.token")),
            f"real.after.{key}",
        )


def finder(run: EncoderRun) -> None:
    """Rank the 72 heads by one pattern score; picking a row opens that head."""
    scores = head_scores(run.attentions, run.tokens)
    head_finder(REAL, lambda pattern: scores.of(pattern).numpy(), t("real.layer"), t("real.head"))


def rollout_view(run: EncoderRun) -> None:
    """Raw attention of one layer (heads averaged) beside the rollout up to that layer."""
    layer = REAL["layer"] - 1
    layer_picker()
    tokens = list(run.tokens)
    raw = run.attentions[layer].mean(dim=0).numpy()  # (T, T)
    rolled = rollout_of(run.attentions)[layer].numpy()  # (T, T)
    rollout_charts(REAL, tokens, raw, rolled, layer)


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


@st.cache_resource(show_spinner=False)
def references() -> object:
    """transformers' BertModel and sentence-transformers, imported and loaded only when a check is asked for."""
    from attnlab.pretrained.reference import load_references

    return load_references(MAX_TOKENS)


@st.cache_resource(show_spinner=False, max_entries=RUNS_KEPT)
def checked(text: str) -> object:
    """Our run of one text against both references (shared: the same text gives the same figures)."""
    from attnlab.pretrained.reference import check_run

    return check_run(references(), run_of(text), MAX_TOKENS)


def check_panel(run: EncoderRun) -> None:
    """Always in the sidebar: our forward pass against BertModel and SentenceTransformer, run on request."""
    box = st.sidebar.container(border=True)
    box.markdown(f"**{t('real.check_title')}**")
    asked = st.session_state.get("real.check_asked", False)
    if not asked:
        box.caption(t("real.check_why_button"))
        if box.button(t("real.check_run"), key="real.check_button", icon=":material/fact_check:"):
            st.session_state["real.check_asked"] = True
            st.rerun()
        return
    with box, st.spinner(t("real.check_running")):
        result = checked(run.text)
    verdict = t("lab.check_pass") if result.passed else t("lab.check_fail")
    (box.success if result.passed else box.error)(
        verdict, icon=":material/check_circle:" if result.passed else ":material/error:"
    )
    rows = [
        (t("real.check_attention"), f"{result.attention_err:.1e}", f"≤ {result.tolerance:.0e}"),
        (t("real.check_hidden"), f"{result.hidden_err:.1e}", f"≤ {result.tolerance:.0e}"),
        (t("real.check_cosine"), f"{result.cosine:.7f}", f"≥ {result.min_cosine}"),
    ]
    box.dataframe(
        pd.DataFrame(rows, columns=[t("lab.check_where"), t("real.check_value"), t("real.check_bound")]),
        hide_index=True,
        width="stretch",
    )
    if not result.tokens_match:
        box.warning(t("real.check_tokens_differ"))
    box.caption(t("real.check_caption"))
