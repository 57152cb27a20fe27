"""The Trained decoder page's path patching: what each sender brings back through a receiver's q, k and v inputs.

For a layer-2 receiver, each layer-1 sender's share through the query, key and value inputs separately, and what
the shipped model's numbers say about it.

The grid is an `st.cache_resource` value keyed on the model, checkpoint, both sequences and the receiver,
shared read-only by every session; text and figures are built per session.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab import trained
from attnlab.figures.decoder import shares_figure
from attnlab.limits import INDUCTION_CLEAR, MAX_DECODER_RUNS
from attnlab.trained.patching import INTO, Gap, gap, path_map
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, segmented, selectbox
from attnlab.ui.pages.decoder.patching import corruption, gap_or_say, sequences
from attnlab.ui.pages.decoder.sections import DECODER, decoder, head_name

SPREAD = 0.05  # a sender whose path brings back at least this share counts as carrying part of it


@st.cache_resource(show_spinner=False, max_entries=MAX_DECODER_RUNS)
def path_grid(
    model: str, step: int, clean: tuple[str, ...], corrupt: tuple[str, ...], receiver: tuple[int, int]
) -> tuple[np.ndarray, Gap]:
    """(senders, 3) shares through q, k and v, and the gap, shared read-only by every session asking the same."""
    dec = decoder(model, step)
    shares = path_map(dec, clean, corrupt, receiver)
    shares.setflags(write=False)  # shared by every session
    return shares, gap(dec, clean, corrupt)


def receiver_or_say(model: trained.Decoder) -> tuple[int, int] | None:
    """The receiver picked (or linked); a head in the first layer has no earlier sender, and the page says so."""
    names = [head_name(ly, hd) for ly in range(model.n_layers) for hd in range(model.n_heads)]
    picked = selectbox(DECODER, "receiver", t("patching.receiver"), options=names, help=t("patching.receiver_help"))
    layer, head = (int(x) - 1 for x in picked.split("."))
    if layer == 0:
        st.error(t("patching.receiver_first", receiver=code(picked, 10)), icon=":material/call_received:")
        return None
    return layer, head


def section(model: trained.Decoder, step: int, symbols: list[str]) -> None:
    """Receiver and corruption, the senders x (q, k, v) map, one input's numbers and what they show."""
    if model.n_layers < 2:
        st.info(t("patching.paths_need_two"), icon=":material/info:")
        return
    receiver = receiver_or_say(model)
    corrupt = corruption(model, symbols) if receiver is not None else None
    if corrupt is None:
        return
    sequences(symbols, corrupt)
    grid, g = path_grid(DECODER["model"], step, tuple(symbols), tuple(corrupt), receiver)
    if not gap_or_say(g):
        return
    senders = [head_name(ly, hd) for ly in range(receiver[0]) for hd in range(model.n_heads)]
    inputs = [t(f"patching.into_{x}") for x in INTO]
    name = head_name(*receiver)
    st.markdown(f"**{t('patching.map_paths', receiver=name)}**")
    chart(shares_figure(grid, senders, inputs), "decoder.path.map")
    into = segmented(DECODER, "into", t("patching.into"), labels=dict(zip(INTO, inputs, strict=True)))
    column = grid[:, INTO.index(into)]
    listed = ", ".join(f"{s} {v:.0%}" for s, v in zip(senders, column, strict=True))
    best = int(np.nanargmax(column))
    st.markdown(
        t(
            "patching.explain_into",
            receiver=name,
            into=t(f"patching.into_{into}"),
            sender=senders[best],
            share=f"{column[best]:.0%}",
            listed=listed,
        )
    )
    what_it_shows(model, grid, senders, name)


def what_it_shows(model: trained.Decoder, grid: np.ndarray, senders: list[str], receiver: str) -> None:
    """The shipped model's numbers in words: which input carries most, and whether layer 1 has a previous-token head."""
    sums = np.nansum(grid, 0)  # (3,): every sender's path through q, k, v, added
    top = INTO[int(np.argmax(sums))]
    fields = dict(q=f"{sums[0]:.0%}", k=f"{sums[1]:.0%}", v=f"{sums[2]:.0%}", best=f"{np.nanmax(grid):.0%}")
    kind = DECODER["corrupt"]
    if kind == "redraw":
        st.markdown(t("patching.shows_redraw", **fields))
    else:
        st.markdown(t("patching.shows_inputs", top=t(f"patching.into_{top}"), receiver=receiver, **fields))
    prev = np.asarray(model.record["heads"]["previous"][0])  # layer 1's previous-token scores at this checkpoint
    h = int(np.argmax(prev))
    carriers = [s for s, v in zip(senders, grid[:, 1], strict=True) if v >= SPREAD]
    spread = ", ".join(carriers) if carriers else "—"
    key = "patching.prev_head" if prev[h] >= INDUCTION_CLEAR else "patching.no_prev_head"
    st.markdown(
        t(
            key,
            head=head_name(0, h),
            score=f"{prev[h]:.2f}",
            share=f"{grid[h, 1]:.0%}",
            n=len(carriers),
            total=len(senders),
            spread=spread,
            receiver=receiver,
        )
    )
