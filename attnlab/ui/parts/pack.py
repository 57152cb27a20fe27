"""The offline classroom pack's downloads, offered by the Playground and the presenter alike."""

from __future__ import annotations

import urllib.parse

import streamlit as st

from attnlab.classroom.pack import csv_zip_bytes, npz_bytes
from attnlab.export_html import pack_html
from attnlab.pipeline import LabConfig, LabResult
from attnlab.ui.app import fold
from attnlab.ui.app.i18n import current_lang, t, translator

FALLBACK_URL = "http://localhost:8501"  # the pack's link back when the server cannot tell its own address


def live_url() -> str:
    """This state's address on the live app (what the pack links back to)."""
    base = (st.context.url or "").split("?")[0].split("#")[0]
    base = base if base.startswith(("http://", "https://")) else FALLBACK_URL
    return f"{base}?{urllib.parse.urlencode(st.query_params.to_dict(), quote_via=urllib.parse.quote)}"


def pack_downloads(config: LabConfig, result: LabResult) -> None:
    """The offline pack: one self-contained HTML file, and every stage matrix as .npz and as CSV in a zip.

    The files are built only when their button is clicked (the HTML carries Plotly's 4 MB script).
    """
    lang, url = current_lang(), live_url()
    st.caption(t("present.ui.pack_help"))
    st.download_button(
        t("present.ui.pack_html"),
        lambda: pack_html(config, result, app_url=url, tr=translator(lang), lang=lang),
        file_name="attnlab-pack.html",
        mime="text/html",
        icon=":material/public_off:",
        on_click="ignore",
        width="stretch",
    )
    matrices = (  # label, bytes built on click, file name, MIME type
        ("NPZ", lambda: npz_bytes(result), "attnlab-stages.npz", "application/octet-stream"),
        ("CSV (zip)", lambda: csv_zip_bytes(result), "attnlab-stages-csv.zip", "application/zip"),
    )
    for column, (label, data, name, mime) in zip(st.columns(2), matrices, strict=True):
        column.download_button(label, data, file_name=name, mime=mime, on_click="ignore", width="stretch")


def pack_box(where, key: str, config: LabConfig, result: LabResult) -> None:
    """The pack's downloads in a folded box of `where`, built only once opened (`fold.folded`, issue 61)."""
    with fold.folded(where, t("present.ui.pack"), key, icon=":material/download:") as opened:
        if opened:
            pack_downloads(config, result)
