"""With no `lang` in the link the UI follows the browser's language (zh* gives 中文); `lang` in the link wins."""

from __future__ import annotations

import pytest
from streamlit.util import calc_hash

from attnlab.testing import app_test, page_on_screen
from attnlab.ui.app.i18n import catalog, lang_for
from tests.app.conftest import assert_clean


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        ("zh-CN", "zh"),
        ("zh", "zh"),
        ("zh-TW", "zh"),
        ("zh-Hant-HK", "zh"),
        ("ZH_cn", "zh"),
        ("en-US", "en"),
        ("de-DE", "en"),
        ("zu", "en"),  # Zulu starts with z, not zh
        ("", "en"),
        (None, "en"),
    ],
)
def test_the_language_for_a_browser_locale(locale, lang):
    assert lang_for(locale) == lang


def visit(locale: str | None, url_path: str = "playground", **query: str):
    """A first visit of /<url_path>?<query> from a browser whose navigator.language is `locale`."""
    at = app_test(url_path=url_path)
    at.context["locale"] = locale
    at.query_params.update(query)
    at.run()
    assert_clean(at)
    assert page_on_screen(at) == calc_hash(url_path)
    return at


TITLES = {"playground": "lab.title", "scaling": "lesson_scaling.title"}


@pytest.mark.parametrize("url_path", sorted(TITLES))
def test_a_chinese_browser_with_no_lang_in_the_link_gets_chinese_and_the_link_says_so(url_path):
    at = visit("zh-CN", url_path)
    assert at.session_state["app.lang"] == "zh"
    assert at.title[0].value == catalog("zh")[TITLES[url_path]]
    assert at.query_params["lang"] == "zh"  # written back: the address bar shares the language
    at.run()  # a later run keeps it, whatever the browser says
    assert at.session_state["app.lang"] == "zh"


def test_the_link_wins_over_the_browser():
    at = visit("zh-CN", lang="en")
    assert at.session_state["app.lang"] == "en" and at.title[0].value == catalog("en")["lab.title"]
    at = visit("en-US", lang="zh")
    assert at.session_state["app.lang"] == "zh"


def test_other_browsers_and_no_locale_get_english():
    for locale in ("de-DE", None):
        at = visit(locale)
        assert at.session_state["app.lang"] == "en" and at.query_params["lang"] == "en"


def test_the_switch_still_changes_the_language_of_a_chinese_browser():
    at = visit("zh-CN")
    switch = next(s for s in at.get("button_group") if s.label == "Language · 语言")
    switch.set_value("en").run()
    assert at.session_state["app.lang"] == "en" and at.query_params["lang"] == "en"
