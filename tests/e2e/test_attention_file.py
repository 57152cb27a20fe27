"""The Attention file page in Chromium: what only a browser does (clicks on Plotly points, an upload, a download)."""

from __future__ import annotations

import pytest

from attnlab import attnfile
from attnlab.testing import click_point
from tests.e2e.conftest import chart_count, main_text, open_app, rerun

pytestmark = pytest.mark.e2e


def point(page, trace: int, index: int):
    """One marker of one scatter trace of the first chart."""
    traces = page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace')
    return traces.nth(trace).locator("path.point").nth(index)


def test_clicking_a_query_on_the_map_picks_it(page, server):
    open_app(page, server, "/attention-file?view=qk&lang=en")
    assert "q=0" in page.url
    click_point(page, point(page, 0, 4))  # trace 0: the queries
    assert "q=5" in page.url
    assert "Query 5" in main_text(page) and chart_count(page) == 1


def test_clicking_a_map_in_the_model_view_opens_that_head(page, server):
    open_app(page, server, "/attention-file?lang=en")
    click_point(page, point(page, 0, 12 * 2 + 6))  # layer 3, head 7
    assert "view=head" in page.url and "layer=3" in page.url and "head=7" in page.url
    assert chart_count(page) == 2


def test_a_file_downloaded_from_the_page_uploads_back_in_the_browser(page, server, tmp_path):
    open_app(page, server, "/attention-file?lang=zh")
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="下载这个注意力文件").click()
    path = tmp_path / "attention.safetensors"
    download.value.save_as(path)
    file = attnfile.load(path.name, path.read_bytes())
    assert file.attentions.shape[:2] == (6, 12) and file.queries is not None
    rerun(page, page.get_by_text("上传文件").click)
    rerun(page, lambda: page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path)))
    assert "all-MiniLM-L6-v2" in main_text(page) and chart_count(page) == 1
    assert page.locator('[data-testid="stException"]').count() == 0
