"""The Playground's shared state and controls: text, sizes, seed, mask, modern attention, and the weight editor.

The Playground, Multi-head and Neuron pages all read the same `lab.*` state (`LAB`), so a number
on one page can be traced on another, and every one of them puts it in the URL (contracts 4 and 13).
The mask has one truth, `mask`; the classic causal switch stays beside it and the two follow each other
(switching causal on picks the causal mask, off the full one; a rule that never shows a later key is causal).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnlab import links
from attnlab.limits import MAX_TOKENS, MAX_URL_EDITS
from attnlab.params import divisors
from attnlab.pipeline import (
    CAUSAL_MASKS,
    ROPES,
    LabConfig,
    LabResult,
    classic,
    decode_edits,
    encode_edits,
    kv_divisor,
    merge_editor_changes,
    run_lab,
)
from attnlab.tokens import tokenize
from attnlab.ui.app import state
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import number, segmented, selectbox, size_inputs, text_input, toggle
from attnlab.ui.parts.stages import head_options

DEFAULT = LabConfig()
INITS = links.INITS
LAB = PageState("lab", links.params("lab"))
EDITS, VERSION, CELL_PROBLEMS = "lab.edits", "lab.edits_version", "lab.cell_problems"
UPLOAD_PROBLEM = "lab.upload_problem"
QUERY = "lab.query"  # the token chip picked on the Playground (its row is outlined; the Neuron view opens it)
HEADS_SEEN = "lab.heads_seen"  # the head count at the last run: key/value heads that matched it follow a change
SYMBOL = {"w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O"}


def load() -> bool:
    """Read the URL once per session, then make heads divide d_model (saying so); True on the first load."""
    first = LAB.load()
    state.adopt([QUERY])  # the picked token chip travels with the Playground's state
    if first:
        edits, bad = decode_edits(st.query_params.get("edits", ""), LAB["d_model"])
        st.session_state[EDITS] = edits
        if bad:
            LAB.add_problem("lab.url_bad_edits", items="; ".join(bad))
    st.session_state.setdefault(EDITS, {})
    st.session_state.setdefault(VERSION, 0)
    LAB.heads_must_divide("d_model", "heads", first)
    if first:
        settle_link()
    kv_heads_follow_heads()
    heads_on_screen_must_exist(first)
    take_editor_changes()
    return first


def settle_link() -> None:
    """The link's mask, causal switch and key/value heads made to agree (contract 13), saying what was replaced."""
    v, raw = LAB.values(), st.query_params.to_dict()
    for bad in links.settle_lab(v, raw):
        asked = f"{bad.name}={bad.raw[:40]}"
        LAB.add_problem(f"lab.url_{bad.reason}", asked=asked, used=bad.used, mask=f"mask={v['mask']}", heads=v["heads"])
    for name in ("mask", "causal", "kv_heads"):
        LAB[name] = v[name]
    st.session_state[HEADS_SEEN] = LAB["heads"]


def kv_heads_follow_heads() -> None:
    """After the head count changes: key/value heads that matched it follow it; others stay a divisor of it."""
    heads, kv = LAB["heads"], LAB["kv_heads"]
    seen = st.session_state.get(HEADS_SEEN, heads)
    if heads != seen and kv == seen:
        LAB["kv_heads"] = heads
    elif heads % kv:
        LAB["kv_heads"] = kv_divisor(heads, kv)
    st.session_state[HEADS_SEEN] = heads


def heads_on_screen_must_exist(first: bool) -> None:
    """A link's `head` past the head count (or a group past the last) shows all heads instead, and says so."""
    n_tokens = min(len(tokenize(LAB["text"])), MAX_TOKENS)
    if LAB["head"] in head_options(LAB["heads"], n_tokens):
        return
    if first:
        LAB.add_problem("lab.url_head_missing", asked=f"head={LAB['head']}", heads=LAB["heads"])
    LAB["head"] = 0


def config() -> LabConfig:
    """The current settings as the pure pipeline's config."""
    v = LAB.values()
    edits = tuple(sorted(st.session_state[EDITS].items()))
    modern = {name: v[name] for name in ("kv_heads", "rope", "alibi", "mask", "window", "sinks", "prefix")}
    return LabConfig(v["text"], v["d_model"], v["heads"], v["causal"], v["seed"], v["init"], v["pe"], edits, **modern)


def save(*pages: PageState, extra: dict[str, str] | None = None) -> None:
    """Put the settings (and the edited cells, when few enough for a link), other pages' state, `extra` in the URL."""
    edits = st.session_state[EDITS]
    cells = {"edits": encode_edits(edits)} if 0 < len(edits) <= MAX_URL_EDITS else {}
    state.save(LAB, *pages, extra={**cells, **(extra or {})})


def controls(narrow: bool = False) -> None:
    """Text, sizes, seed, mask and start of the weights, laid out for wide and narrow screens.

    `narrow` is for a sidebar's 240 px (the presenter's): there each control takes a row of its own, since three
    columns of it left each about 60 px, wrapped "d_model" in two and hid the switches' labels and the key/value heads'
    choice. A phone needs no flag: Streamlit stacks columns itself under 640 px."""
    rows = stacked if narrow else side_by_side
    text_input(LAB, "text", t("lab.text"), help=t("lab.text_help", cap=MAX_TOKENS))
    size_inputs(LAB, rows(3))
    cols = rows([2, 1, 1])
    labels = {v: t(f"lab.init_{v}") for v in INITS}
    segmented(LAB, "init", t("lab.init"), where=cols[0], labels=labels, help=t("lab.init_help"))
    toggle(LAB, "causal", t("lab.causal"), where=cols[1], help=t("lab.causal_help"), on_change=causal_switched)
    toggle(LAB, "pe", t("lab.pe"), where=cols[2], help=t("lab.pe_help"))
    modern_controls(rows)


def side_by_side(spec: int | list[float]) -> list:
    """Columns of the given widths, their widgets centred on one line."""
    return st.columns(spec, vertical_alignment="center")


def stacked(spec: int | list[float]) -> list:
    """As many places as `spec` has columns, each the current container: one control a row."""
    return [st] * (spec if isinstance(spec, int) else len(spec))


def causal_switched() -> None:
    """The causal switch picks the causal mask (on) or none (off)."""
    LAB["mask"] = "causal" if LAB["causal"] else "full"


def mask_picked() -> None:
    """A picked rule sets the causal switch: on for every rule that never shows a query a later key."""
    LAB["causal"] = LAB["mask"] in CAUSAL_MASKS


def kv_label(n: int, heads: int) -> str:
    """A key/value head count with the name of what it makes: MHA, GQA or MQA."""
    kind = "mha" if n == heads else "mqa" if n == 1 else "gqa"
    return t(f"lab.kv_{kind}", n=n)


def modern_controls(rows: Callable[[int | list[float]], list]) -> None:
    """Key/value heads, RoPE, ALiBi, and the mask with its window, sinks or prefix, in `controls`' `rows`."""
    heads = LAB["heads"]
    left, middle, right = rows([1, 1.6, 0.8])
    options = divisors(heads)[::-1]
    labels = {n: kv_label(n, heads) for n in options}
    selectbox(LAB, "kv_heads", t("lab.kv_heads"), where=left, options=options, labels=labels, help=t("lab.kv_help"))
    ropes = {name: t(f"lab.rope_{name}") for name in ROPES}
    selectbox(LAB, "rope", t("lab.rope"), where=middle, labels=ropes, help=t("lab.rope_help"))
    toggle(LAB, "alibi", t("lab.alibi"), where=right, help=t("lab.alibi_help"))
    kinds = {name: t(f"lab.mask_{name}") for name in LAB.params["mask"].options}
    rule, *sizes = rows([1.6, 1, 1])
    selectbox(LAB, "mask", t("lab.mask"), where=rule, labels=kinds, help=t("lab.mask_help"), on_change=mask_picked)
    shown = {"window": ("window",), "sinks": ("window", "sinks"), "prefix": ("prefix",)}.get(LAB["mask"], ())
    for name, where in zip(shown, sizes, strict=False):
        number(LAB, name, t(f"lab.{name}"), where=where, help=t(f"lab.{name}_help"))


def text_status(result: LabResult) -> bool:
    """Say when the text is empty or over the cap; False when there is nothing to compute."""
    if not result.tokens:
        st.info(t("lab.empty_text"), icon=":material/edit:")
        return False
    if result.n_tokens_typed > len(result.tokens):
        st.warning(t("lab.too_many_tokens", n=result.n_tokens_typed, cap=MAX_TOKENS), icon=":material/content_cut:")
    for (
        used
    ) in result.fallbacks:  # settings this text cannot honour: what the run used instead (the widgets keep theirs)
        fields = dict(used.fields, asked=used.asked, used=used.used)
        st.warning(state.problem(f"lab.fallback_{used.reason}", **fields).text(), icon=":material/swap_horiz:")
    return True


def compute(classic_only: bool = False) -> LabResult:
    """Run the pipeline for the current settings; a page that takes classic attention apart (`classic_only`) runs
    their classic form and says so when the settings hold more (shared key/value heads, RoPE, ALiBi, a rule)."""
    settings = config()
    if classic_only and settings.modern:
        st.info(t("lab.classic_only"), icon=":material/info:")
        return run_lab(classic(settings))
    return run_lab(settings)


def editor_cells(name: str, view: str, d_model: int, heads: int, kv_heads: int | None = None) -> tuple[list, list]:
    """Rows and columns of a matrix shown in one editor view (W_O's head part is rows, others columns).

    W_K and W_V hold only the key/value heads: query head h edits the columns of the one it reads.
    """
    every, d_k = list(range(d_model)), d_model // heads
    kv = heads if kv_heads is None else kv_heads
    width = d_k * kv if name in ("w_k", "w_v") else d_model
    if view == "all":
        return every, list(range(width))
    block = int(view) // (heads // kv) if name in ("w_k", "w_v") else int(view)
    part = list(range(block * d_k, (block + 1) * d_k))
    return (part, every) if name == "w_o" else (every, part)


def take_editor_changes() -> None:
    """Fold cells typed into the editor into the overrides, before anything is computed."""
    version = st.session_state[VERSION]
    d_model, heads = LAB["d_model"], LAB["heads"]
    prefix, suffix = "lab.editor.", f".{version}"
    for widget_key in [k for k in st.session_state if k.startswith(prefix) and k.endswith(suffix)]:
        edited = (st.session_state[widget_key] or {}).get("edited_rows") or {}
        if not edited:
            continue
        _, _, name, view, _ = widget_key.split(".")
        if view != "all" and int(view) >= heads:
            continue
        rows, cols = editor_cells(name, view, d_model, heads, LAB["kv_heads"])
        edits, problems = merge_editor_changes(st.session_state[EDITS], name, edited, rows, {f"d{c}": c for c in cols})
        st.session_state[EDITS] = edits
        st.session_state[CELL_PROBLEMS] = problems
        st.session_state[VERSION] = version + 1


def query_row(n_tokens: int) -> int | None:
    """The picked token chip's position, if it is inside the current text."""
    picked = st.session_state.get(QUERY)
    return picked if picked is not None and picked < n_tokens else None
