"""Every UI string exists in both languages, with the same placeholders."""

from __future__ import annotations

import re
import string

import pytest

from attnlab.ui.app.i18n import LANGS, catalog

FIELDS = re.compile(r"\{(\w+)")


def fields(text: str) -> set[str]:
    """The {name} placeholders of a format string."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_languages_have_the_same_keys():
    en, zh = catalog("en"), catalog("zh")
    assert sorted(set(en) - set(zh)) == [] and sorted(set(zh) - set(en)) == []


@pytest.mark.parametrize("lang", LANGS)
def test_no_string_is_empty_and_placeholders_match(lang):
    for key, text in catalog(lang).items():
        assert text.strip(), key
        assert fields(text) == fields(catalog("en")[key]), key


def test_chinese_strings_are_translated():
    same = [k for k, v in catalog("zh").items() if v == catalog("en")[k] and re.search(r"[A-Za-z]{4,} [a-z]{3,}", v)]
    assert same == []
