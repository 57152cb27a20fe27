"""A Chinese browser opening a link without `lang` gets the Chinese UI, and the address bar then says lang=zh."""

from __future__ import annotations

import urllib.parse

import pytest

from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import main_text, no_exception, open_app

pytestmark = pytest.mark.e2e


def test_a_zh_cn_browser_gets_chinese_and_the_link_names_it(browser, server):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1400, "height": 1000})
    try:
        tab = context.new_page()
        assert tab.evaluate("navigator.language") == "zh-CN"
        open_app(tab, server, "/scaling")
        assert no_exception(tab)
        assert catalog("zh")["lesson_scaling.title"] in main_text(tab)
        tab.wait_for_function("() => new URL(location.href).searchParams.get('lang') === 'zh'")
        assert urllib.parse.parse_qs(urllib.parse.urlparse(tab.url).query)["lang"] == ["zh"]
        open_app(tab, server, "/scaling?lang=en")  # the link wins over the browser
        assert catalog("en")["lesson_scaling.title"] in main_text(tab)
    finally:
        context.close()
