"""Benchmark: time attnlab's explicit and tiled attention against PyTorch's kernels on this server's device,
and show the results recorded on a real GPU (data/gpu/*.json). Only measured numbers are drawn."""

import streamlit as st

from attnlab.bench import IMPLS
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.benchmark import results as ui
from attnlab.ui.pages.benchmark.sections import PAGE, controls, recorded, run, runnable_lengths, sweep_config, this_run


def main() -> None:
    """Settings, the run button, this session's run, then the recorded GPU runs."""
    PAGE.load()
    st.title(t("benchmark.title"))
    st.caption(t("benchmark.intro"))
    PAGE.show_problems()
    ui.device_line(PAGE["dtype"])
    controls()
    impls = [i for i in IMPLS if i in PAGE["impls"]]
    runnable = runnable_lengths(impls)
    if st.button(t("benchmark.run"), type="primary", icon=":material/timer:", disabled=not (impls and runnable)):
        run(sweep_config(runnable, impls))
    this_run()
    recorded()
    state.save(PAGE)


main()
