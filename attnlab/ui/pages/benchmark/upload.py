"""The Benchmark page's results files from anyone: an upload read by `load_results`, and every run side by side.

An uploaded file is never trusted: `attnlab.bench.results.load_results` checks it, a refusal is said in the
user's language with every value from the file as inert text, and the rest of the page (its URL settings,
the live run) is untouched. A file that passes is labelled with its device, date and torch version and
drawn like a recorded one; then one implementation at one size is compared across the uploaded file, the
recorded files and this session's live run, in TFLOP/s and as a share of each device's own peak.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from attnlab.bench.results import RecordedRun, ResultsError, load_results
from attnlab.bench.row import ResultRow
from attnlab.figures.bench import compare_figure
from attnlab.limits import MAX_RESULTS_UPLOAD_MB
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, keep_choice
from attnlab.ui.pages.benchmark import modern
from attnlab.ui.pages.benchmark import results as ui

KEY = "bench.up"
Source = tuple[str, list[ResultRow], dict[str, float]]  # (label, rows, peaks by dtype)
KINDS = ("list", "object", "string", "number", "boolean", "null", "empty")


def refusal(name: str, err: ResultsError) -> str:
    """Why a file was refused, in the user's language, every value from the file in a code span."""
    fields = {k: code(v) for k, v in err.fmt.items()}
    if err.fmt.get("found") in KINDS:
        fields["found"] = t(f"bench_errors.kind_{err.fmt['found']}")
    try:
        reason = t(f"bench_errors.{err.reason}", **fields)
    except (KeyError, IndexError):  # a reason with no sentence: the generic one, never a traceback
        reason = t("bench_errors.unreadable")
    return t("benchmark.upload_refused", name=code(name), reason=reason)


def from_upload() -> RecordedRun | None:
    """The uploaded results file, checked; a refusal in the user's language when it cannot be shown."""
    upload = st.file_uploader(
        t("benchmark.upload"), type=["json"], key=f"{KEY}.file", max_upload_size=MAX_RESULTS_UPLOAD_MB
    )
    if upload is None:
        st.caption(t("benchmark.upload_hint"))
        return None
    try:
        return load_results(upload.name, upload.getvalue())
    except ResultsError as err:
        st.error(refusal(upload.name, err), icon=":material/block:")
        return None


def heading(run: RecordedRun) -> None:
    """Where a file's numbers come from: its label, file, CUDA, date, and what kind of run it was."""
    st.markdown(f"##### {code(run.label, 200)}")
    st.caption(ui.env_caption(run.env, run.name))
    if run.env.get("dry_run"):
        st.info(t("benchmark.dry_run_file"), icon=":material/science:")
    if "timer_ratio" in run.env:
        st.caption(t("benchmark.timer_ratio", ratio=f"{run.env['timer_ratio']:.3f}"))


def _pick(label: str, key: str, options: Sequence, labels: dict | None = None) -> object:
    """A session-only choice among values a file holds (no URL: an upload is not in the link)."""
    options = list(options)
    if len(options) == 1:
        return options[0]
    keep_choice(key, options, options[0])
    kw = {"format_func": labels.get} if labels else {}
    return st.selectbox(label, options, key=key, **kw)


def slice_of(rows: Sequence[ResultRow], key: str) -> list[ResultRow]:
    """The rows of one dtype, head size and mask, picked among those the file holds (key/value heads stay lines)."""
    cols = st.columns(3)
    with cols[0]:
        dtype = _pick(t("benchmark.dtype"), f"{key}.dtype", sorted({r.dtype for r in rows}))
    with cols[1]:
        head_dim = _pick(t("benchmark.head_dim"), f"{key}.hd", sorted({r.head_dim for r in rows}))
    masks = modern.mask_names(rows)
    with cols[2]:
        mask = _pick(t("benchmark.mask"), f"{key}.mask", sorted(masks), masks)
    return [r for r in rows if (r.dtype, r.head_dim, r.mask) == (dtype, head_dim, mask)]


def uploaded() -> RecordedRun | None:
    """The upload section: the uploader, then the file drawn like a recorded run."""
    st.divider()
    st.subheader(t("benchmark.upload_title"))
    st.caption(t("benchmark.upload_intro", cap=MAX_RESULTS_UPLOAD_MB))
    run = from_upload()
    if run is not None:
        heading(run)
        ui.draw_results(slice_of(run.results, KEY), run.env, KEY, with_downloads=False)
        modern.studies(run.results, KEY, recorded=True)
    return run


def sources(live: dict | None, recorded: Sequence[RecordedRun], upload: RecordedRun | None) -> list[Source]:
    """Every result set on the page, labelled: the upload first, then the recorded files, then the live run."""
    out: list[Source] = []
    if upload is not None:
        out.append((f"{t('benchmark.source_upload')} · {upload.label}", upload.results, upload.env["peak_tflops"]))
    out += [(run.label, run.results, run.env.get("peak_tflops") or {}) for run in recorded]
    if live:
        env = live["env"]
        label = f"{t('benchmark.source_live')} · {env['device_name']} · torch {env['torch']}"
        out.append((label, [ResultRow.from_dict(r) for r in live["results"]], env.get("peak_tflops") or {}))
    return out


def _common_first(ok: list[tuple[int, ResultRow]], field: str) -> list:
    """A field's values, those found in the most result sets first (PyTorch's own sdpa first among equals)."""
    sets: dict = {}
    for n, r in ok:
        sets.setdefault(getattr(r, field), set()).add(n)
    return sorted(sets, key=lambda v: (-len(sets[v]), v != "sdpa", str(v)))


def side_by_side(sets: list[Source]) -> None:
    """One implementation at one dtype, head size and mask across every result set: TFLOP/s and share of peak."""
    if len(sets) < 2:
        return
    st.divider()
    st.subheader(t("benchmark.compare_title"))
    st.caption(t("benchmark.compare_intro"))
    ok = [(n, r) for n, (_, rows, _) in enumerate(sets) for r in rows if r.ok and r.tflops is not None]
    pickers = (
        ("impl", t("benchmark.compare_impl"), None),
        ("dtype", t("benchmark.dtype"), None),
        ("head_dim", t("benchmark.head_dim"), None),
        ("mask", t("benchmark.mask"), modern.mask_names([r for _, r in ok])),
        ("kv_heads", t("benchmark.kv_heads"), None),
    )
    want = {}
    for col, (field, label, labels) in zip(st.columns(len(pickers)), pickers, strict=True):
        if not ok:
            return
        with col:
            want[field] = _pick(label, f"bench.cmp.{field}", _common_first(ok, field), labels)
        ok = [(n, r) for n, r in ok if getattr(r, field) == want[field]]
    fields = tuple(want)
    picked = [
        (label, [r for r in rows if tuple(getattr(r, f) for f in fields) == tuple(want.values())], p)
        for label, rows, p in sets
    ]
    x_title, dtype = t("benchmark.axis_t"), want["dtype"]
    chart(compare_figure(picked, t("benchmark.compare_tflops"), x_title, "TFLOP/s"), "bench.cmp.tflops")
    if any(p.get(dtype) and rows for _, rows, p in picked):
        y_title = t("benchmark.col_share") + " (%)"
        chart(compare_figure(picked, t("benchmark.compare_share"), x_title, y_title, share=True), "bench.cmp.share")
    else:
        st.caption(t("benchmark.compare_no_peak", dtype=dtype))
