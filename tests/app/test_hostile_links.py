"""Every URL parameter of every page, fed hostile values: no traceback, every replaced value said, no live markup.

Generated from the page registry: each page is opened once to learn which parameters it reads (the
page states it loads), then once per hostile value with every one of those parameters set to it.
"""

from __future__ import annotations

import re

import pytest

from attnlab.params import Invalid
from attnlab.ui.app.registry import PAGES
from attnlab.ui.app.state import SCOPES
from tests.app.conftest import assert_clean, open_page

HOSTILE = {
    "empty": "",
    "negative": "-7",
    "huge": "9" * 400,
    "not_finite": "1e999",
    "nan": "NaN",
    "hex": "0x10",
    "full_width": "１２",
    "control": "a\x00b\nc\td\x1b[31m",
    "markdown": "[click](http://evil.example) ![i](http://evil.example/i.png) **b** :red[r] $x^2$",
    "html": "<img src=x onerror=alert(1)><script>alert(1)</script>",
    "long": "w " * 3000,
}
LIVE = ("](http", "![", "<img", "<script", "**b**", ":red[", "$x^2$")  # markup that must never reach markdown live
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)*?\1", re.S)
ESCAPED = re.compile(r"\\[^\w\s]")  # \< \[ \*: CommonMark shows the character itself


def scopes_read(spec) -> list[str]:
    """The page states (scopes) a visit of the page loads, the router's and the page's own: one plain visit, opened
    directly (each scope marks itself loaded once per session, so a fresh session marks every scope it reads)."""
    at = open_page(spec.path)
    return sorted(key.removeprefix("_loaded.") for key in at.session_state if key.startswith("_loaded."))


def messages(at) -> list[str]:
    """Every message and piece of markdown text the page drew."""
    kinds = ("warning", "error", "info", "success", "caption", "markdown")
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


def outside_code(text: str) -> str:
    """A message without what markdown shows literally: inline code spans and backslash-escaped characters."""
    return ESCAPED.sub("", CODE_SPAN.sub("", text))


def parsed(param, raw: str) -> tuple[bool, object]:
    """Whether the parameter accepts this text as it is, and the value the page must then hold."""
    try:
        return True, param.parse(raw)
    except Invalid as bad:
        return False, bad.used


def is_text(param) -> bool:
    """Free text (what the user typed must be kept), as opposed to a number, switch or choice."""
    return isinstance(param.default, str) and not param.options


@pytest.mark.parametrize("spec", PAGES, ids=[spec.file for spec in PAGES])
def test_hostile_values_in_every_parameter_of_the_page(spec):
    params = {SCOPES[scope].key(name): p for scope in scopes_read(spec) for name, p in SCOPES[scope].params.items()}
    for label, raw in HOSTILE.items():
        at = open_page(spec.path, **{p.name: raw for p in params.values()})
        assert_clean(at)
        for text in messages(at):
            assert not [m for m in LIVE if m in outside_code(text)], (spec.file, label, text)
        warnings = " ".join(str(w.value) for w in at.warning)
        for key, param in params.items():
            ok, value = parsed(param, raw)
            if not ok:
                assert f"`{param.name}=" in warnings or f"`{param.name}`" in warnings, (spec.file, label, key)
            if is_text(param):
                assert at.session_state[key] == value, (spec.file, label, key)  # what was typed is kept
