"""The Benchmark page's long-context parts (contract 15): masks, key/value heads, two study presets, the studies.

Controls for the mask rule and the key/value head counts, and what a result set says about a sliding window and
grouped heads.

The presets set the page's own settings to a study that fits the live run's time budget and memory cap at small
sizes on a CPU; the studies themselves are drawn from whatever rows a result set holds (the live run, a recorded
GPU file, an upload), and a set with no such rows says so plainly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import streamlit as st

from attnlab.bench.maskrule import parse_mask
from attnlab.bench.memory import format_bytes
from attnlab.bench.row import ResultRow
from attnlab.bench.studies import KvStudy, WindowStudy, kv_bytes, kv_studies, window_studies
from attnlab.figures.bench_modern import kv_memory_figure, kv_time_figure, window_figure
from attnlab.params import divisors
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import URL_PREVIEW_CHARS, PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, keep_choice, multiselect, number, selectbox

# Small enough for a shared CPU within LIVE_BENCH_BUDGET_S and MEMORY_CAP_BYTES (one FlexAttention compile for the
# window; one per key/value grouping for the heads, three here), large enough that a 128-key window leaves most
# blocks empty at the longer lengths.
WINDOW_STUDY = dict(dtype="float32", heads=4, head_dim=64, batch=1, mask="window", window=128, kv_heads=[4],
                    impls=["sdpa", "flex"], seq=[256, 512, 1024, 2048])  # fmt: skip
KV_STUDY = dict(dtype="float32", heads=4, head_dim=64, batch=1, mask="causal", kv_heads=[1, 2, 4],
                impls=["sdpa", "flex"], seq=[1024])  # fmt: skip


def mask_spec(page: PageState) -> str:
    """The rule the page's settings name: 'full', 'causal', 'window:128', 'documents:4'."""
    kind = page["mask"]
    size = {"window": page["window"], "documents": page["docs"]}.get(kind)
    return f"{kind}:{size}" if size else kind


def mask_label(spec: str) -> str:
    """A rule in the user's language: 'no mask', 'causal', 'window of 128', '4 documents'."""
    rule = parse_mask(spec)
    return t(f"benchmark.mask_{rule.kind}_label", n=rule.size)


def mask_names(rows: Sequence[ResultRow]) -> dict[str, str]:
    """Every rule in these rows, worded for the charts' series names."""
    return {spec: mask_label(spec) for spec in {r.mask for r in rows}}


def fit_kv(page: PageState) -> None:
    """Keep the key/value head counts that divide the heads (or the heads themselves when none does)."""
    heads = page["heads"]
    page["kv_heads"] = [k for k in page["kv_heads"] if heads % k == 0] or [heads]


def after_load(page: PageState, first: bool) -> None:
    """Read an older link's causal=true as mask=causal, default the key/value heads to the heads, say what changed."""
    query = st.query_params
    if first and "mask" not in query and page["causal"]:
        page["mask"] = "causal"
    elif first and page["causal"] and page["mask"] != "causal":
        page.add_problem("benchmark.url_causal_mask", asked="causal=true", mask=f"mask={page['mask']}")
    if first and "kv_heads" not in query:
        page["kv_heads"] = [page["heads"]]
    before = list(page["kv_heads"])
    fit_kv(page)
    if first and page["kv_heads"] != before:
        asked = f"kv_heads={query.get('kv_heads', '')}"[:URL_PREVIEW_CHARS]
        used = ",".join(map(str, page["kv_heads"]))
        page.add_problem("benchmark.url_kv_heads", asked=asked, heads=page["heads"], used=used)
    page["causal"] = page["mask"] == "causal"  # older readers of the link keep their meaning


def _apply(page: PageState, preset: dict) -> None:
    """A study's settings into the page's widgets (a button's callback, before the widgets are drawn)."""
    for name, value in preset.items():
        page[name] = list(value) if isinstance(value, list) else value


def presets(page: PageState) -> None:
    """Two buttons that set up a study the live run can do here."""
    st.caption(t("benchmark.studies_intro"))
    left, right = st.columns(2)
    left.button(t("benchmark.study_window"), on_click=_apply, args=(page, WINDOW_STUDY), icon=":material/width:",
                key="bench.study.window", width="stretch")  # fmt: skip
    right.button(t("benchmark.study_kv"), on_click=_apply, args=(page, KV_STUDY), icon=":material/group_work:",
                 key="bench.study.kv", width="stretch")  # fmt: skip


def controls(page: PageState) -> None:
    """The mask rule (with its window or number of documents) and the key/value head counts to sweep."""
    labels = {kind: t(f"benchmark.mask_{kind}") for kind in page.params["mask"].options}
    cols = st.columns([1.3, 1, 1.7], vertical_alignment="bottom")
    selectbox(page, "mask", t("benchmark.mask"), where=cols[0], labels=labels, help=t("benchmark.mask_help"))
    if page["mask"] == "window":
        number(page, "window", t("benchmark.window"), where=cols[1], help=t("benchmark.window_help"))
    elif page["mask"] == "documents":
        selectbox(page, "docs", t("benchmark.docs"), where=cols[1], help=t("benchmark.docs_help"))
    fit_kv(page)
    options = divisors(page["heads"])
    multiselect(page, "kv_heads", t("benchmark.kv_heads"), where=cols[2], options=options, help=t("benchmark.kv_help"))


def _pick(label: str, key: str, options: list, labels: dict | None = None):
    """A session-only choice among what a result set holds (none drawn when there is one option)."""
    if len(options) == 1:
        return options[0]
    keep_choice(key, options, options[-1])
    return st.selectbox(label, options, key=key, **({"format_func": labels.get} if labels else {}))


def _window(study: WindowStudy, key: str) -> None:
    """One sliding-window study: the chart, and what it shows in words."""
    r, sdpa = study.first, study.sdpa[0].impl
    mode = (r.mode or "eager").split(":")[0]  # compiled or eager: why is said beside the run, not in a legend
    names = (t("benchmark.flex_name", mode=mode), t("benchmark.sdpa_dense_name", impl=sdpa))
    cross = "" if study.crossing is None else t("benchmark.crossing_mark", t=f"{study.crossing:,.0f}")
    fig = window_figure(study, mask_label(r.mask), t("benchmark.axis_t"), t("benchmark.axis_ms"), names, cross)
    chart(fig, f"{key}.window")
    longest, share = study.lengths[-1], parse_mask(r.mask).share(study.lengths[-1])
    wins = study.flex_wins_at
    if study.crossing is not None:
        said = t("benchmark.window_cross", t=f"{study.crossing:,.0f}")
    elif wins:
        said = t("benchmark.window_flex_always")
    else:
        said = t("benchmark.window_sdpa_always", t=longest)
    st.caption(said + " " + t("benchmark.window_share", t=longest, share=f"{share:.0%}", dtype=r.dtype))


def _kv(study: KvStudy, key: str) -> None:
    """One grouped-heads study: time and K/V bytes against the number of key/value heads."""
    r = study.first
    left, right = st.columns(2)
    with left:
        title = t("benchmark.kv_time_title", t=r.seq_len, heads=r.heads)
        chart(kv_time_figure(study, title, t("benchmark.kv_axis"), t("benchmark.axis_ms")), f"{key}.kvtime")
    with right:
        fig = kv_memory_figure(study, t("benchmark.kv_mem_title"), t("benchmark.kv_axis"), t("benchmark.kv_mem_axis"),
                               t("benchmark.kv_mem_name"))  # fmt: skip
        chart(fig, f"{key}.kvmem")
    fewest = min(study.kv_heads)
    low, high = kv_bytes(_with_kv(r, fewest)), kv_bytes(_with_kv(r, r.heads))
    st.caption(t("benchmark.kv_said", low=format_bytes(low), kv=fewest, high=format_bytes(high), heads=r.heads))


def _with_kv(row: ResultRow, kv: int) -> ResultRow:
    """The same row's shape with another number of key/value heads (for the bytes K and V take)."""
    return replace(row, kv_heads=kv)


def studies(rows: Sequence[ResultRow], key: str, recorded: bool, heading: bool = True) -> None:
    """The sliding-window and grouped-heads studies these rows hold; a plain word when they hold none. `heading`:
    under their own title (not where a folded section's title already names them)."""
    windows, kvs = window_studies(rows), kv_studies(rows)
    if not windows and not kvs:
        if recorded:
            st.info(t("benchmark.modern_none_file"), icon=":material/info:")
        else:
            st.caption(t("benchmark.modern_none_live"))
        return
    if heading:
        st.markdown(f"#### {t('benchmark.studies_title')}")
    if windows:
        labels = {n: f"{s.first.dtype} · d={s.first.head_dim} · KV={s.first.kv_heads}" for n, s in enumerate(windows)}
        n = _pick(t("benchmark.study_pick"), f"{key}.wpick", list(labels), labels)
        _window(windows[n], key)
    if kvs:
        labels = {n: f"{s.first.dtype} · {mask_label(s.first.mask)} · T={s.first.seq_len}" for n, s in enumerate(kvs)}
        n = _pick(t("benchmark.study_pick"), f"{key}.kpick", list(labels), labels)
        _kv(kvs[n], key)
    if not windows:
        st.caption(t("benchmark.no_window_rows"))
    if not kvs:
        st.caption(t("benchmark.no_kv_rows"))


def mode_notes(rows: Sequence[ResultRow]) -> None:
    """How FlexAttention ran in these rows: compiled, or eager and why (the reason verbatim, as code)."""
    modes = sorted({r.mode for r in rows if r.impl == "flex" and r.mode})
    for mode in modes:
        if mode == "compiled":
            st.caption(t("benchmark.flex_compiled"))
        elif mode == "eager":
            st.caption(t("benchmark.flex_eager"))
        else:
            st.caption(t("benchmark.flex_eager_why", why=code(mode.removeprefix("eager: "), 300)))
