"""Words inside the pages' formulas are in the reader's language: "值" and "缓存" on a Chinese page, never "value"."""

from __future__ import annotations

import pytest

from attnlab.ui.app.i18n import catalog
from tests.app.conftest import assert_clean, open_page

# page, its query, and the catalogue keys of the words its formulas carry
PAGES = [
    ("views/soft_dictionary.py", {}, ["lesson_dictionary.tex_value"]),
    ("views/cost.py", {}, ["lesson_cost.tex_time", "lesson_cost.tex_memory"]),
    ("views/kv_cache.py", {}, ["kvcache.tex_per_token", "kvcache.tex_cache", "kvcache.tex_batch"]),
    ("views/kv_cache.py", {"model": "deepseek-v3"}, ["kvcache.tex_per_token"]),  # MLA's own formula
    ("views/multihead.py", {"open": "gqa"}, ["gqa.tex_cache", "gqa.tex_bytes"]),
    ("views/positions.py", {}, ["lesson_positions.but"]),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("page", "query", "keys"), PAGES, ids=["-".join([p[0][6:-3], *p[1].values()]) for p in PAGES])
def test_the_words_in_a_pages_formulas_are_the_readers(page, query, keys, lang):
    at = open_page(page, lang=lang, **query)
    assert_clean(at)
    formulas = " ".join(str(x.value) for x in at.latex)
    own, other = catalog(lang), catalog("zh" if lang == "en" else "en")
    for key in keys:
        assert rf"\text{{{own[key]}}}" in formulas, key
        assert rf"\text{{{other[key]}}}" not in formulas, key
