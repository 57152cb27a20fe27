"""What each page reads from its link: every page's URL parameters, and a query string parsed without Streamlit.

The pages bind these same Params to their widgets (`attnlab.ui.app.state.PageState`), and the notebook writer
(`attnlab.notebook`) parses a query with them, so a link means the same on the page and in a notebook, and a
value that cannot be honoured falls back to the same value in both. Pure Python: torch and numpy only through
the core modules whose defaults the parameters take, and each scope's only when it is first asked for (`params`):
a thread that warms one page's imports never imports another page's modules.
"""

from __future__ import annotations

import functools
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

from attnlab.links.bench import BENCH_SCOPES
from attnlab.links.common import LANGS, PALETTE_NAMES, Replaced, app_params
from attnlab.links.explore import EXPLORE_SCOPES, INITS, NEURON_PRESETS, parse_pad, settle_lab
from attnlab.links.kv import KV_SCOPES
from attnlab.links.lessons import LESSON_SCOPES
from attnlab.links.lm import LM_SCOPES
from attnlab.links.models import (
    DECODER_CORRUPTIONS,
    DECODER_INSIDE,
    DECODER_MODELS,
    DECODER_SEQ,
    LAST,
    MODEL_SCOPES,
    REAL_VIEWS,
    SHIPPED_HEADS,
    SOURCE_VIEWS,
    attn_sources,
)
from attnlab.params import Param

__all__ = [
    "DECODER_CORRUPTIONS",
    "DECODER_INSIDE",
    "DECODER_MODELS",
    "DECODER_SEQ",
    "INITS",
    "LANGS",
    "LAST",
    "NEURON_PRESETS",
    "PALETTE_NAMES",
    "REAL_VIEWS",
    "SCOPES",
    "SHIPPED_HEADS",
    "SOURCE_VIEWS",
    "Replaced",
    "attn_sources",
    "params",
    "parse_pad",
    "read",
    "settle_lab",
    "split_query",
]

SCOPES: dict[str, Callable[[], tuple[Param, ...]]] = {  # scope (its session-state prefix) -> its Params' builder
    "app": app_params,
    **EXPLORE_SCOPES,
    **MODEL_SCOPES,
    **LESSON_SCOPES,
    **BENCH_SCOPES,
    **KV_SCOPES,
    **LM_SCOPES,
}


@functools.lru_cache(maxsize=len(SCOPES))
def params(scope: str) -> tuple[Param, ...]:
    """One scope's Params, built on first use: each imports only what its page imports anyway."""
    return SCOPES[scope]()


def split_query(query: str) -> dict[str, str]:
    """A URL query string ("text=I+like+you&heads=2", with or without "?") as {name: last value}.

    A piece with no "=" is not a parameter a page could have written: ValueError naming it. A value is never
    refused here (the page's Param replaces a bad one); empty pieces ("a=1&&b=2") are skipped, as browsers do.
    """
    pieces = [piece for piece in query.lstrip("?").split("&") if piece]
    for piece in pieces:
        if "=" not in piece:
            name = urllib.parse.unquote_plus(piece)[:40]
            raise ValueError(f"malformed query: parameter {name!r} has no value (write {name}=...)")
    return dict(urllib.parse.parse_qsl("&".join(pieces), keep_blank_values=True))


def read(scopes: Sequence[str], query: dict[str, str]) -> tuple[dict[str, dict[str, Any]], list[Replaced]]:
    """Each scope's values for a parsed query, as its page reads them: a bad value falls back the same way."""
    values: dict[str, dict[str, Any]] = {}
    replaced: list[Replaced] = []
    for scope in scopes:
        values[scope] = {}
        for param in params(scope):
            raw = query.get(param.name)
            values[scope][param.name], bad = param.read(raw)
            if bad is not None:
                replaced.append(Replaced(param.name, raw, param.dump(bad.used), bad.reason))
    return values, replaced
