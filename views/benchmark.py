"""Benchmark: what a real GPU measured first (the headline of data/gpu/*.json), then time attnlab's explicit and tiled
attention against PyTorch's kernels (every SDPA backend, FlexAttention, nn.MultiheadAttention, with masks and grouped
key/value heads) on this server's device, and show the recorded runs and a results file a visitor uploads, side by
side. Only measured numbers are drawn."""

import streamlit as st

from attnlab.bench import IMPLS
from attnlab.ui.app import first_screen, state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.benchmark import headline, live, upload
from attnlab.ui.pages.benchmark import results as ui
from attnlab.ui.pages.benchmark.sections import controls, load, page_state, recorded, runnable_lengths, sweep_config


def main() -> None:
    """The recorded headline, settings, Run (one sweep per server at a time), this session's run, the recorded runs,
    an upload."""
    page, rec = page_state()
    load(page)
    st.title(t("benchmark.title"))
    st.caption(t("benchmark.intro"))
    page.show_problems()
    file = upload.current()
    headline.section(rec.headlines, file[2])
    first_screen.rest(lambda: later(page, rec, file))  # a new visitor's browser draws the headline first
    state.save(page)


def later(page, rec, file) -> None:
    """Settings and Run, this session's run, the recorded runs, an upload beside them."""
    ui.device_line(page["dtype"])
    controls(page)
    impls = [i for i in IMPLS if i in page["impls"]]
    runnable = runnable_lengths(page, impls)
    live.run_button(lambda: sweep_config(page, runnable, impls), bool(impls and runnable))
    live.section()
    recorded(page, rec)
    mine = upload.uploaded(file)
    upload.side_by_side(upload.sources(st.session_state.get(live.RESULT_KEY), rec.runs, mine))


main()
