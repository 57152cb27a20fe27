"""The Attention file page's source: an example or an upload, what it holds, its download, the views that apply.

Caches hold numbers only (loaded files), keyed on the file's content hash (an upload) or on the example's name
and input; the views are the shared inspector's (`attnlab/ui/parts/inspector.py`), whose caches are keyed on the
same digest. Every text and figure is built per session in its language and palette.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from attnlab import attnfile, links
from attnlab.attnexamples import EXAMPLES, ExampleInputError, kind_of
from attnlab.limits import MAX_ATTN_UPLOAD_MB
from attnlab.pretrained import INSTALL_COMMAND, ModelMissing
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import segmented
from attnlab.ui.parts.inspector import VIEWS, applies

SOURCES = links.attn_sources()
FILES_KEPT = 4  # files a server keeps loaded (each at most the loader's cap of values)
MAX_SHOWN = 128  # tokens listed in the summary line
MAX_UNKNOWN_SHOWN = 20  # characters a model lacks, listed in its warning
PAGE = PageState("attnfile", links.params("attnfile"))


@st.cache_resource(show_spinner=False, max_entries=FILES_KEPT)
def uploaded(name: str, digest: str, _data: bytes) -> attnfile.AttentionFile:
    """One uploaded file, loaded once per content (the digest is the key; the bytes are not hashed again)."""
    return attnfile.load(name, _data)


@st.cache_resource(show_spinner=False, max_entries=FILES_KEPT)
def example(name: str, text: str) -> attnfile.AttentionFile:
    """A bundled example built live, shared by every session that asks for the same input (read-only)."""
    return EXAMPLES[name].build(text)


def opened() -> tuple[attnfile.AttentionFile, str, str] | None:
    """The file on screen (an example or an upload), its cache key and its kind; None with a message otherwise."""
    source = source_picker()
    got = from_upload() if source == "upload" else from_example(source)
    if got is None:
        return None
    file, digest = got
    return file, digest, kind_of(file)


def load() -> None:
    """Read the URL once per session; a link that names an example but no text starts from that example's input."""
    if PAGE.load() and "text" not in st.query_params and PAGE["source"] in EXAMPLES:
        PAGE["text"] = EXAMPLES[PAGE["source"]].text


def follow_source() -> None:
    """Another example reads another kind of input (a sentence, symbols): its text box starts from its own."""
    if PAGE["source"] in EXAMPLES:
        PAGE["text"] = EXAMPLES[PAGE["source"]].text


def source_picker() -> str:
    """An example or an upload."""
    labels = {s: t(f"attnfile.source_{s}") for s in SOURCES}
    return segmented(PAGE, "source", t("attnfile.source"), labels=labels, on_change=follow_source)


def from_upload() -> tuple[attnfile.AttentionFile, str] | None:
    """The uploaded file and its digest, or a message saying what is wrong with it (in the user's language)."""
    upload = st.file_uploader(
        t("attnfile.upload"), type=["safetensors"], key="attnfile.upload", max_upload_size=MAX_ATTN_UPLOAD_MB
    )
    if upload is None:
        st.info(t("attnfile.upload_hint"), icon=":material/upload_file:")
        return None
    data = upload.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    try:
        return uploaded(upload.name, digest, data), digest
    except attnfile.AttentionFileError as bad:
        refused(upload.name, bad)
        return None


def refused(name: str, bad: attnfile.AttentionFileError) -> None:
    """The loader's reason in the user's language, the file's name and every value from the file as inert text."""
    fields = {k: code(v) for k, v in bad.fmt.items()}
    try:
        reason = t(f"attnfile_errors.{bad.reason}", **fields)
    except (KeyError, IndexError):  # a reason this page has no sentence for: the generic one, never a traceback
        reason = t("attnfile_errors.unreadable")
    st.error(t("attnfile.refused", name=code(name), reason=reason), icon=":material/block:")


def from_example(name: str) -> tuple[attnfile.AttentionFile, str] | None:
    """The example built on the text box's input, or a message when the model is missing or cannot read it."""
    spec = EXAMPLES[name]
    help_text = t("attnfile.example_help" if spec.cuts else f"attnfile.example_{name}_help", cap=spec.max_tokens)
    text = st.text_input(t(f"attnfile.example_{name}_text"), key=PAGE.key("text"), help=help_text)
    try:
        file = example(name, text)
    except ExampleInputError as bad:
        fields = {k: code(v, 200) if isinstance(v, str) else v for k, v in bad.fmt.items()}
        st.error(t(bad.key, **fields), icon=":material/block:")
        return None
    except ModelMissing as missing:
        st.error(t("real.missing", command=code(INSTALL_COMMAND)), icon=":material/download:")
        st.caption(t("common.library_said", detail=code(str(missing), 300)))
        return None
    except ValueError:
        st.info(t("attnfile.example_empty"), icon=":material/edit:")
        return None
    if spec.cuts and len(file.tokens) >= spec.max_tokens:
        st.warning(t("attnfile.example_cut", cap=spec.max_tokens), icon=":material/content_cut:")
    unknown = list(dict.fromkeys(spec.unknown(text))) if spec.unknown is not None else []
    if unknown:
        chars = " ".join(code(c, 8) for c in unknown[:MAX_UNKNOWN_SHOWN])
        st.warning(t("attnfile.example_unknown", n=len(unknown), chars=chars), icon=":material/help:")
    return file, f"example:{name}:" + hashlib.sha256(text.encode()).hexdigest()


def summary(file: attnfile.AttentionFile, kind: str) -> None:
    """The model's name, the shapes, and what kind of attention the file holds."""
    n_layers, n_heads, t_q, t_k = file.attentions.shape
    st.markdown(t("attnfile.model", model=code(file.model or t("attnfile.unnamed"))))
    rows = [f"attentions: ({n_layers}, {n_heads}, {t_q}, {t_k})"]
    for name in ("queries", "keys"):
        value = getattr(file, name)
        rows.append(f"{name}: {tuple(value.shape)}" if value is not None else f"{name}: —")
    st.markdown(t("attnfile.shapes") + " " + " · ".join(code(r) for r in rows))
    if file.n_kv_heads < n_heads:
        group = n_heads // file.n_kv_heads
        st.markdown(t("attnfile.grouped", heads=n_heads, kv_heads=file.n_kv_heads, group=group))
    if file.scale or file.softcap or file.window:
        st.markdown(t("attnfile.rule", parts=t("attnfile.rule_sep").join(rule_parts(file))))
    if file.qk_declined:
        st.markdown(t("attnfile.declined", reason=t(f"attnfile.declined_{file.qk_declined}")))
    st.markdown(t("attnfile.kind", kind=t(f"attnfile.kind_{kind}")) + " " + t(f"attnfile.kind_{kind}_help"))
    st.markdown(t("attnfile.tokens_q", n=t_q) + " " + " ".join(code(tok, 24) for tok in file.tokens[:MAX_SHOWN]))
    if kind == "cross":
        st.markdown(t("attnfile.tokens_k", n=t_k) + " " + " ".join(code(tok, 24) for tok in file.tokens_k[:MAX_SHOWN]))


def _values(values: list) -> str:
    """Distinct numbers in the order met, as short text (one for a rule every layer shares)."""
    return ", ".join(f"{v:.4g}" for v in dict.fromkeys(values))


def rule_parts(file: attnfile.AttentionFile) -> list[str]:
    """The score rule a file states, in words: its scale(s), its soft-cap(s), the layers with each window."""
    parts = [t("attnfile.rule_scale", scale=_values(list(file.scale)))] if file.scale else []
    caps = [c for c in file.softcap if c is not None]
    if caps:
        parts.append(t("attnfile.rule_softcap", cap=_values(caps)))
    for w in dict.fromkeys(w for w in file.window if w is not None):
        layers = ", ".join(str(i + 1) for i, v in enumerate(file.window) if v == w)
        parts.append(t("attnfile.rule_window", window=w, layers=layers))
    return parts


def download(file: attnfile.AttentionFile) -> None:
    """The file as safetensors, written by the same `save` a notebook uses when clicked, so it loads back here."""
    st.download_button(
        t("attnfile.download"),
        data=lambda: attnfile.file_bytes(file),  # written on click, in its own thread: nothing is kept per session
        file_name="attention.safetensors",
        mime="application/octet-stream",
        icon=":material/download:",
        key="attnfile.download",
        on_click="ignore",  # a rerun on click replaces the deferred bytes the browser is asking for: no download
    )


def views_for(file: attnfile.AttentionFile) -> tuple[str, ...]:
    """The views that apply: the query-key map needs queries and keys; finder and rollout one list of tokens."""
    return tuple(v for v in VIEWS if applies(v, file))
