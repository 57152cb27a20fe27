"""The Attention file page's own part of its views: link values fitted to the file, the view picker, the inspector.

Every view itself (model, head, query-key map, finder, rollout) is the shared inspector's
(`attnlab/ui/parts/inspector.py`), which the Real model page draws too.
"""

from __future__ import annotations

import streamlit as st

from attnlab.attnfile import AttentionFile
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import segmented
from attnlab.ui.pages.attention_file.source import PAGE
from attnlab.ui.parts.inspector import Shown


def fit(file: AttentionFile, views: tuple[str, ...]) -> None:
    """Link values this file cannot honour (a layer past its end, a view it cannot show): replaced, and said."""
    n_layers, n_heads, t_q, t_k = file.attentions.shape
    for name, size, first in (("layer", n_layers, 1), ("head", n_heads, 1), ("q", t_q, 0), ("k", t_k, 0)):
        if PAGE[name] > size:
            st.info(t("attnfile.past_end", asked=code(f"{name}={PAGE[name]}"), n=size), icon=":material/info:")
            PAGE[name] = first
    if PAGE["view"] not in views:
        st.info(t("attnfile.view_missing", view=t(f"attnfile.view_{PAGE['view']}")), icon=":material/info:")
        PAGE["view"] = "model"


def view_picker(views: tuple[str, ...]) -> str:
    """Which of the views this file can show is on screen."""
    labels = {v: t(f"attnfile.view_{v}") for v in views}
    return segmented(PAGE, "view", t("attnfile.view"), options=views, labels=labels)


def shown(file: AttentionFile, digest: str) -> Shown:
    """The file as the inspector draws it: this page's state and words, its numbers cached under the digest."""
    return Shown(PAGE, "attnfile", file, digest)
