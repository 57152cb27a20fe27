"""The Trained decoder page's head patching: what each head brings back, beside ablation, and one head in both runs.

The corruption picker, the layers x heads map of what comes back, the ablation map on the same gap, and one head's
weights and output in the clean and the corrupt run side by side.

Maps are `st.cache_resource` numbers keyed on the model, checkpoint and both sequences, shared read-only by
every session; text and figures are built per session.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import streamlit as st

from attnlab import trained
from attnlab.figures import dim_labels, matrix_figure
from attnlab.figures.decoder import click_targets, shares_figure
from attnlab.limits import MAX_DECODER_RUNS
from attnlab.trained.patching import (
    Gap,
    ablate_heads,
    gap,
    patch_all,
    period,
    redraw_first_period,
    shuffle_first_period,
)
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, chart_config, segmented, text_input
from attnlab.ui.pages.decoder.numbers import parse_symbols
from attnlab.ui.pages.decoder.sections import CORRUPTIONS, DECODER, decoder, head_name, run_of

SEED = 0  # the corruptions' seed: the same corrupt sequence on every visit
MAP_KEY, HEAD_KEY = "decoder.patch.map", "decoder.patch_head"  # the clickable map and the head it opens
CLICK_TRACE = 1  # the map's traces: the heatmap, then the invisible points (no "blocked" layer: no -inf share)


@dataclass(frozen=True)
class HeadMaps:
    """Both runs' metric and, per head, the share patching restores and the share zeroing loses."""

    gap: Gap
    restored: np.ndarray  # (L, H)
    lost: np.ndarray  # (L, H)
    every: float  # all heads patched at once


@st.cache_resource(show_spinner=False, max_entries=MAX_DECODER_RUNS)
def head_maps(model: str, step: int, clean: tuple[str, ...], corrupt: tuple[str, ...]) -> HeadMaps:
    """Patching and ablation maps on the same gap, shared read-only by every session asking the same."""
    dec = decoder(model, step)
    restored, lost = trained.patch_heads(dec, clean, corrupt), ablate_heads(dec, clean, corrupt)
    for shares in (restored, lost):
        shares.setflags(write=False)  # shared by every session
    return HeadMaps(gap(dec, clean, corrupt), restored, lost, patch_all(dec, clean, corrupt))


def corruption(model: trained.Decoder, symbols: list[str]) -> list[str] | None:
    """The corruption picker and the corrupt sequence, or a message in the user's language (typed text kept)."""
    labels = {k: t(f"patching.corrupt_{k}") for k in CORRUPTIONS}
    kind = segmented(DECODER, "corrupt", t("patching.corrupt"), labels=labels)
    st.caption(t(f"patching.asks_{kind}"))
    if kind == "typed":
        if not DECODER["corrupt_seq"]:
            DECODER["corrupt_seq"] = " ".join(redraw_or_none(model, symbols) or symbols)
        text_input(DECODER, "corrupt_seq", t("patching.corrupt_seq"), help=t("patching.corrupt_seq_help"))
        return typed(model, symbols, parse_symbols(DECODER["corrupt_seq"]))
    try:
        make = redraw_first_period if kind == "redraw" else shuffle_first_period
        return make(model, symbols, SEED)
    except trained.SymbolError:
        key = "patching.no_period" if period(symbols) is None else "patching.period_of_one"
        st.warning(t(key), icon=":material/repeat:")
        return None


def redraw_or_none(model: trained.Decoder, symbols: list[str]) -> list[str] | None:
    """The default corruption to start the typed box from, or None when the sequence has no period."""
    try:
        return redraw_first_period(model, symbols, SEED)
    except trained.SymbolError:
        return None


def typed(model: trained.Decoder, clean: list[str], corrupt: list[str]) -> list[str] | None:
    """The user's corrupt sequence, or why it cannot be patched against the clean one."""
    problem = model.problem(corrupt)
    if problem is not None and problem[0] == "unknown":
        shown = " ".join(code(s, 20) for s in problem[1]["unknown"][:8])
        st.error(t("patching.corrupt_unknown", symbols=shown, vocab=code(" ".join(model.vocab), 200)))
        return None
    if len(corrupt) != len(clean):
        st.error(t("patching.corrupt_length", n=len(corrupt), clean=len(clean)), icon=":material/straighten:")
        return None
    return corrupt


def sequences(clean: list[str], corrupt: list[str]) -> None:
    """Both sequences, the corrupt one's changed symbols in bold."""
    marked = " ".join(f"**{code(b, 20)}**" if a != b else code(b, 20) for a, b in zip(clean, corrupt, strict=True))
    st.markdown(
        f"{t('patching.clean')}: {' '.join(code(a, 20) for a in clean)}  \n{t('patching.corrupt_run')}: {marked}"
    )


def gap_or_say(g: Gap) -> bool:
    """State the metric on both runs; False (and say so) when there is no gap to restore."""
    st.markdown(
        t(
            "patching.metric",
            n=len(g.positions),
            clean=f"{g.clean:.2f}",
            corrupt=f"{g.corrupt:.2f}",
            gap=f"{g.size:.2f}",
        )
    )
    if not g.positions:
        st.info(t("patching.no_positions"), icon=":material/info:")
        return False
    if not g.defined:
        st.info(t("patching.no_gap", gap=f"{g.size:.4f}"), icon=":material/info:")
        return False
    return True


def heads_section(model: trained.Decoder, step: int, symbols: list[str]) -> None:
    """Pick a corruption; the restoration map beside the ablation map; one head's stages in both runs."""
    corrupt = corruption(model, symbols)
    if corrupt is None:
        return
    sequences(symbols, corrupt)
    maps = head_maps(DECODER["model"], step, tuple(symbols), tuple(corrupt))
    if not gap_or_say(maps.gap):
        return
    rows = [t("decoder.layer", n=ly + 1) for ly in range(model.n_layers)]
    cols = [t("patching.head_n", n=hd + 1) for hd in range(model.n_heads)]
    left, right = st.columns(2)
    with left:
        st.markdown(f"**{t('patching.map_patch')}**")
        fig = click_targets(shares_figure(maps.restored, rows, cols), rows, cols, maps.restored)
        st.plotly_chart(
            fig,
            width="stretch",
            config=chart_config(MAP_KEY),
            key=MAP_KEY,
            theme=None,
            on_select=partial(open_clicked, model.n_heads),
            selection_mode="points",
        )
    with right:
        st.markdown(f"**{t('patching.map_ablate')}**")
        chart(shares_figure(maps.lost, rows, cols), "decoder.patch.ablate")
    explain(model, maps)
    both_runs(model, step, symbols, corrupt, maps)


def open_clicked(n_heads: int) -> None:
    """A click on the patching map (on a cell's invisible point) opens that head below (the chart's callback)."""
    head = clicked_head(st.session_state[MAP_KEY], n_heads)
    if head is not None:
        st.session_state[HEAD_KEY] = head_name(*head)


def clicked_head(event, n_heads: int) -> tuple[int, int] | None:
    """The (layer, head) of the clicked cell in a chart selection event, or None if no cell point was clicked."""
    points = [p for p in event.get("selection", {}).get("points", []) if p.get("curve_number") == CLICK_TRACE]
    if not points:
        return None
    i = int(points[0]["point_index"])
    return divmod(i, n_heads)


def explain(model: trained.Decoder, maps: HeadMaps) -> None:
    """The live numbers: the best head by patching and by zeroing, all heads at once, and which question is which."""
    r, z = maps.restored, maps.lost
    best, worst = np.unravel_index(np.nanargmax(r), r.shape), np.unravel_index(np.nanargmax(z), z.shape)
    st.markdown(
        t(
            "patching.explain_heads",
            head=head_name(*best),
            share=f"{r[best]:.0%}",
            every=f"{maps.every:.0%}",
            layer1=f"{np.nanmax(r[0]):.0%}",
            zhead=head_name(*worst),
            zshare=f"{z[worst]:.0%}",
        )
    )
    st.caption(t("patching.questions"))


def both_runs(model: trained.Decoder, step: int, clean: list[str], corrupt: list[str], maps: HeadMaps) -> None:
    """One head (default: the one that restores most): its weights and output in the clean and corrupt runs."""
    names = [head_name(ly, hd) for ly in range(model.n_layers) for hd in range(model.n_heads)]
    key = HEAD_KEY
    if st.session_state.get(key) not in names:
        st.session_state[key] = head_name(*np.unravel_index(np.nanargmax(maps.restored), maps.restored.shape))
    picked = st.selectbox(t("patching.open_head"), names, key=key, help=t("patching.open_head_help"))
    layer, head = (int(x) - 1 for x in picked.split("."))
    st.caption(
        t(
            "patching.open_numbers",
            head=picked,
            share=f"{maps.restored[layer, head]:.0%}",
            lost=f"{maps.lost[layer, head]:.0%}",
        )
    )
    runs = (("clean", t("patching.clean"), clean), ("corrupt", t("patching.corrupt_run"), corrupt))
    for col, (name, label, seq) in zip(st.columns(2), runs, strict=True):
        run = run_of(DECODER["model"], step, tuple(seq), ())
        s = model.head_steps(run, layer, head)
        with col:
            st.markdown(f"**{label}**")
            tokens = list(run.tokens)
            chart(matrix_figure(s.weights.numpy(), tokens, tokens, kind="prob", text=False), f"decoder.patch.{name}.w")
            chart(
                matrix_figure(s.output.numpy(), tokens, dim_labels(s.output.shape[-1]), text=False),
                f"decoder.patch.{name}.o",
            )
