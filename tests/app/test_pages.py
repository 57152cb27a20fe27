"""Every registered page runs in both languages, and every formula it writes is clean text.

This is the second-language pass: other AppTest tests run each behaviour in one language (tests/app/conftest.py).
"""

from __future__ import annotations

import re

import pytest

from attnlab.ui.app.registry import PAGES
from tests.app.conftest import assert_clean, open_page

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # a TAB where `\to` was meant, a stray escape


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("spec", PAGES, ids=[spec.file for spec in PAGES])
def test_every_registered_page_runs_and_its_formulas_have_no_control_characters(spec, lang):
    at = open_page(spec.path, lang=lang)
    assert_clean(at)
    assert at.title, spec.file  # the page drew its heading
    formulas = [element.value for element in at.latex]
    assert not [f for f in formulas if CONTROL.search(f)]
