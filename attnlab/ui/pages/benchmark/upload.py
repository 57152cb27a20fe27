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

from attnlab.bench.headline import Headline, headline
from attnlab.bench.results import RecordedRun, ResultsError, load_results
from attnlab.bench.row import ResultRow
from attnlab.figures.bench import compare_figure
from attnlab.limits import MAX_RESULTS_UPLOAD_MB
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, keep_choice
from attnlab.ui.pages.benchmark import grid, modern
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


Parsed = tuple[RecordedRun | None, ResultsError | None, Headline | None]


@st.cache_data(show_spinner=False, max_entries=8)
def _parse(name: str, data: bytes) -> Parsed:
    """A file's bytes checked and read, with its headline (numbers only, keyed on the bytes themselves)."""
    try:
        run = load_results(name, data)
    except ResultsError as err:
        return None, err, None
    return run, None, headline(run.results, run.env, run.label)


def current() -> Parsed:
    """The file in this session's uploader, read before the uploader is drawn (the headline at the top shows it)."""
    upload = st.session_state.get(f"{KEY}.file")
    if upload is None or isinstance(upload, list):
        return None, None, None
    return _parse(upload.name, upload.getvalue())


def from_upload(parsed: Parsed) -> RecordedRun | None:
    """The uploader, and the file it holds (`parsed`, this run's `current()`); a refusal in the user's language."""
    upload = st.file_uploader(
        t("benchmark.upload"), type=["json"], key=f"{KEY}.file", max_upload_size=MAX_RESULTS_UPLOAD_MB
    )
    if upload is None:
        st.caption(t("benchmark.upload_hint"))
        return None
    run, err, _ = parsed if parsed[0] or parsed[1] else _parse(upload.name, upload.getvalue())
    if err is not None:
        st.error(refusal(upload.name, err), icon=":material/block:")
    return run


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


def uploaded(parsed: Parsed) -> RecordedRun | None:
    """The upload section: the uploader, then the file drawn like a recorded run (`parsed`: this run's `current()`)."""
    st.divider()
    st.subheader(t("benchmark.upload_title"))
    st.caption(t("benchmark.upload_intro", cap=MAX_RESULTS_UPLOAD_MB))
    run = from_upload(parsed)
    if run is not None:
        heading(run)
        ui.draw_results(grid.pick(run.results, KEY), run.env, KEY, with_downloads=False)
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
