"""Benchmark: time attnlab's explicit and tiled attention against PyTorch's kernels on this server's device,
show the results recorded on a real GPU (data/gpu/*.json) and a results file a visitor uploads, side by side.
Only measured numbers are drawn."""

import streamlit as st

from attnlab.bench import IMPLS
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.benchmark import results as ui
from attnlab.ui.pages.benchmark import upload
from attnlab.ui.pages.benchmark.sections import (
    RESULT_KEY,
    controls,
    page_state,
    recorded,
    run,
    runnable_lengths,
    sweep_config,
    this_run,
)


def main() -> None:
    """Settings, the run button, this session's run, the recorded GPU runs, an uploaded file, all side by side."""
    page, rec = page_state()
    page.load()
    st.title(t("benchmark.title"))
    st.caption(t("benchmark.intro"))
    page.show_problems()
    ui.device_line(page["dtype"])
    controls(page)
    impls = [i for i in IMPLS if i in page["impls"]]
    runnable = runnable_lengths(page, impls)
    if st.button(t("benchmark.run"), type="primary", icon=":material/timer:", disabled=not (impls and runnable)):
        run(sweep_config(page, runnable, impls))
    this_run()
    recorded(page, rec)
    mine = upload.uploaded()
    upload.side_by_side(upload.sources(st.session_state.get(RESULT_KEY), rec.runs, mine))
    state.save(page)


main()
