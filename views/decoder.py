"""Trained decoder: small causal models trained here, their predictions, heads, generation, patching and training."""

import numpy as np
import streamlit as st

from attnlab.ui.app import first_screen, fold, state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.widgets import segmented, text_input
from attnlab.ui.pages.decoder import inside
from attnlab.ui.pages.decoder import sections as dec
from attnlab.ui.pages.decoder import yours as decoder_yours
from attnlab.ui.pages.decoder.numbers import predictions


def main() -> None:
    """The model and sequence, then predictions, attention, training and the run of your own."""
    st.title(t("decoder.title"))
    st.caption(t("decoder.intro"))
    dec.DECODER.load()
    segmented(dec.DECODER, "model", t("decoder.model"), labels={k: t(f"decoder.model_{k}") for k in dec.MODELS})
    step = dec.checkpoint()
    dec.DECODER.show_problems()
    model = dec.decoder(dec.DECODER["model"], step)
    text_input(dec.DECODER, "seq", t("decoder.seq"), help=t("decoder.seq_help", cap=model.max_len))
    dec.input_controls(tuple(model.vocab), step, model.max_len)
    ablate = dec.ablated(model)
    state.save(dec.DECODER)
    symbols = dec.symbols_or_say(model)
    run = dec.run_or_say(step, symbols, ablate) if symbols else None
    if run is None:
        dec.training(dec.DECODER["model"], step)
        decoder_yours.section(dec.MODELS[dec.DECODER["model"]])
        return
    preds = predictions(np.asarray(run.probs), run.tokens, symbols, model.vocab)
    predictions_section(run, symbols, preds)
    attention_section(model, run)
    first_screen.rest(lambda: later(model, step, symbols, ablate))  # a new visitor's browser draws every head first


def later(model, step, symbols, ablate) -> None:
    """Inside one head, the training and the run of your own."""
    inside.section(model, step, symbols, ablate)
    dec.training(dec.DECODER["model"], step)
    decoder_yours.section(dec.MODELS[dec.DECODER["model"]])


def predictions_section(run, symbols, preds) -> None:
    """The losses, the live explanation and the table of guesses."""
    st.subheader(t("decoder.predictions"))
    dec.losses(preds)
    dec.explanation(run, symbols, preds)
    dec.prediction_table(preds)


def attention_section(model, run) -> None:
    """Every head's map, then one head's stages."""
    st.subheader(t("decoder.attention"))
    dec.attention_grid(run, model.n_heads)
    with fold.folded(st, t("decoder.stages"), "decoder.stages_open") as opened:
        if opened:  # eleven charts, built and sent only for a reader who opens them
            dec.head_stages(model, run)


main()
