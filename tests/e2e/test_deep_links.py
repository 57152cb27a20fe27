"""A link to a page other than the Playground must work as the first request a fresh server sees."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import open_app

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_first_request_to_a_fresh_server_can_be_a_deep_link(page, fresh_server):
    open_app(page, fresh_server, "/cross?lang=zh&src=I+like+you&tgt=%E6%88%91%E5%96%9C%E6%AC%A2%E4%BD%A0")
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "Page not found" not in page.content()
    assert "我喜欢你" in page.locator('[data-testid="stMain"] input').nth(1).input_value()
    assert "交叉注意力" in main  # the router ran: the page speaks the link's language
    assert page.locator('[data-testid="stSidebar"]').get_by_text("中文").count() >= 1
