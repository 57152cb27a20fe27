"""A Chinese browser opening a link without `lang` gets the Chinese UI, and the address bar then says lang=zh."""

from __future__ import annotations

import urllib.parse

import pytest

from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import main_text, no_exception, open_app

pytestmark = pytest.mark.e2e


def speak_chinese(context, tab) -> None:
    """Make one tab's browser Chinese before it loads anything: what Playwright's `locale="zh-CN"` does to a whole
    context (the Intl locale, navigator.language and the Accept-Language header), done to one tab of the shared
    profile, which then needs no renderer of its own."""
    cdp = context.new_cdp_session(tab)
    cdp.send("Emulation.setLocaleOverride", {"locale": "zh-CN"})
    agent = tab.evaluate("navigator.userAgent")
    cdp.send("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": "zh-CN"})


def test_a_zh_cn_browser_gets_chinese_and_the_link_names_it(context, page, server):
    speak_chinese(context, page)
    assert page.evaluate("[navigator.language, Intl.DateTimeFormat().resolvedOptions().locale]") == ["zh-CN"] * 2
    open_app(page, server, "/lessons")  # a page without charts: the language is what is checked
    assert no_exception(page)
    assert catalog("zh")["lessons.title"] in main_text(page)
    page.wait_for_function("() => new URL(location.href).searchParams.get('lang') === 'zh'")
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["lang"] == ["zh"]
    open_app(page, server, "/lessons?lang=en")  # the link wins over the browser
    assert catalog("en")["lessons.title"] in main_text(page)
