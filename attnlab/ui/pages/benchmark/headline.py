"""The Benchmark page's headline: what the best recorded GPU run says, first, before anyone presses Run.

Its chart (`figures.bench_headline`) and three sentences, every number from the run's `Headline` (computed once per
file, `results.recorded_runs`): PyTorch's fastest attention without a mask and its share of the device's peak,
attnlab's explicit path against SDPA, FlexAttention against SDPA given a dense mask under a sliding window. With two
recorded GPUs, or an uploaded file, their headlines stand side by side (two to a row), on one y scale.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from attnlab.bench.headline import Headline, best_first
from attnlab.figures.bench_headline import headline_figure, y_top
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart

MAX_RECORDED = 2  # recorded runs in the headline, the best first (each further file is one pick away, below)
PER_ROW = 2  # headlines side by side: a third would leave each panel too narrow to read


def _ratio(x: float) -> str:
    """How many times, one decimal: '19.9'."""
    return f"{x:.1f}"


def _ms(x: float) -> str:
    """A time in ms, three significant digits."""
    return f"{x:.3g}"


def sentences(h: Headline) -> list[str]:
    """Two or three sentences from the headline's numbers, in the reader's language (none for a part it lacks)."""
    out = []
    if h.fastest:
        f = h.fastest
        fields = dict(device=code(h.device), impl=f.impl, tflops=f"{f.tflops:.0f}", t=f.seq_len, dtype=h.dtype)
        if f.share is not None:
            out.append(t("benchmark.head_fastest", share=f"{f.share:.0%}", peak=f"{h.peak:.0f}", **fields))
        else:
            out.append(t("benchmark.head_fastest_nopeak", **fields))
    if h.explicit:
        e = h.explicit
        out.append(
            t("benchmark.head_explicit", ratio=_ratio(e.ratio), t=e.seq_len, ms=_ms(e.impl_ms), sdpa_ms=_ms(e.other_ms))
        )
    if h.window:
        w = h.window
        fields = dict(window=w.window, t=w.seq_len, flex_ms=_ms(w.impl_ms), sdpa_ms=_ms(w.other_ms), impl=w.other)
        if w.ratio <= 1:
            out.append(t("benchmark.head_window_flex", ratio=_ratio(1 / w.ratio), **fields))
        else:
            out.append(t("benchmark.head_window_sdpa", ratio=_ratio(w.ratio), **fields))
    return out


def _one(h: Headline, label: str, y_max: float, key: str) -> None:
    """One device's headline: its chart, then its sentences."""
    masks = {"full": t("benchmark.mask_full_label"), "causal": t("benchmark.mask_causal_label")}
    title = h.device
    y_title = t("benchmark.head_y_title", dtype=h.dtype, d=h.head_dim)
    peak = t("benchmark.head_peak", peak=f"{h.peak:.0f}") if h.peak else ""
    fig = headline_figure(h, title, t("benchmark.axis_t"), y_title, masks, peak, t("benchmark.of_peak"), y_max)
    chart(fig, key)
    st.caption(code(label, 200))
    st.markdown(" ".join(sentences(h)))


def shown(recorded: Sequence[Headline | None], upload: Headline | None) -> list[tuple[Headline, str]]:
    """The headlines on screen with their labels: the best recorded runs first, then the uploaded file's."""
    out = [(h, h.label) for h in best_first([h for h in recorded if h is not None])[:MAX_RECORDED]]
    if upload is not None:
        out.append((upload, f"{t('benchmark.source_upload')} · {upload.label}"))
    return out


def section(recorded: Sequence[Headline | None], upload: Headline | None) -> None:
    """The headline of the recorded GPU runs (and an uploaded file), or nothing when none has the rows for one."""
    heads = shown(recorded, upload)
    if not heads:
        return
    st.subheader(t("benchmark.head_title"))
    st.caption(t("benchmark.head_intro"))
    y_max = y_top([h for h, _ in heads])
    for start in range(0, len(heads), PER_ROW):
        row = heads[start : start + PER_ROW]
        cols = st.columns(len(row)) if len(row) > 1 else [st.container()]
        for n, (col, (h, label)) in enumerate(zip(cols, row, strict=True)):
            with col:
                _one(h, label, y_max, f"bench.head.{start + n}")
    st.divider()
