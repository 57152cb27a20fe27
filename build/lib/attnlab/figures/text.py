"""Text that reaches Plotly: escaped, because Plotly renders some HTML in labels, titles and hover text."""

from __future__ import annotations

import html
from collections.abc import Sequence


def esc(text: object) -> str:
    """Any text made safe for Plotly (our own translated strings go through here too)."""
    return html.escape(str(text), quote=False)


def label(text: str, width: int = 14) -> str:
    """Token text made safe for Plotly (so `<b>` shows as `<b>`) and cut to `width` characters."""
    short = text if len(text) <= width else text[: width - 1] + "…"
    return esc(short)


def unique_labels(texts: Sequence[str], width: int = 16) -> list[str]:
    """Escaped, shortened labels made distinct with zero-width spaces, so repeated tokens stay separate rows."""
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        base = label(text, width)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(base + "\u200b" * n)
    return out


def dim_labels(n: int, prefix: str = "d") -> list[str]:
    """Column names for feature dimensions: d0, d1, ..."""
    return [f"{prefix}{i}" for i in range(n)]
