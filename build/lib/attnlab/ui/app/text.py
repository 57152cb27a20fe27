"""Outside text (from a link, a file or the keyboard) made inert before Streamlit's markdown sees it.

Streamlit renders messages as markdown: a link, an image, emphasis or LaTeX riding in on a value
from a shared URL would become live. Prose keeps its words with `md_escape`; a quoted value is shown
verbatim as inline code with `code`, whatever characters it holds.
"""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$&:])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BACKTICKS = re.compile(r"`+")


def visible_controls(text: str) -> str:
    """Control characters (newlines, tabs, escapes) written as their code point, so they cannot reshape a message."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def md_escape(text: object) -> str:
    """User text made inert for Streamlit markdown: no emphasis, links, HTML, math or line breaks."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible_controls(str(text)))


def code(value: object, limit: int = 80) -> str:
    """A value as an inline code span (shown exactly as typed), cut to `limit` characters.

    The fence is one backtick longer than the longest run inside, and padded with spaces when the
    value starts or ends with a backtick, as CommonMark requires.
    """
    text = visible_controls(str(value))
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    if not text:
        return "` `"
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or text[0] == " " == text[-1] else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    """A small table as markdown, every cell made inert: it needs none of the scripts a data grid loads."""
    lines = [header, tuple("---" for _ in header), *rows]
    return "\n".join(
        "| " + " | ".join(cell if i == 1 else md_escape(cell) for cell in line) + " |" for i, line in enumerate(lines)
    )
