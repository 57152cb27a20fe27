"""Taking a view out in a real browser: a chart's toolbar gives a slide-sized PNG and an SVG, the sidebar a notebook."""

from __future__ import annotations

import json
import struct

import pytest

from tests.e2e.conftest import open_app

pytestmark = pytest.mark.e2e  # the browser group: one server and one browser for every browser test

CHART = '[data-testid="stPlotlyChart"]'


def download(tab, button, tmp_path, name):
    """Click `button` and keep the file the browser downloads; returns its suggested name and its bytes."""
    with tab.expect_download(timeout=60_000) as got:
        button.click()
    path = tmp_path / name
    got.value.save_as(path)
    return got.value.suggested_filename, path.read_bytes()


def test_a_charts_toolbar_downloads_png_and_svg_and_the_sidebar_a_notebook(page, server, tmp_path):
    open_app(page, server, "/masking?lang=zh&palette=cb")
    chart = page.locator(CHART).first
    chart.locator(".main-svg").first.wait_for()
    chart.hover()
    png_button = chart.locator(".modebar-btn[data-attnlab-png]")
    svg_button = chart.locator(".modebar-btn.attnlab-svg")
    svg_button.wait_for(timeout=30_000)
    assert svg_button.get_attribute("data-title") == "下载为 SVG（幻灯片尺寸）"

    name, png = download(page, png_button, tmp_path, "chart.png")
    assert name == "attnlab-masking-lmask-chart-weights.png"
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk: a 1280 x 720 layout at scale 2
    assert (width, height) == (2560, 1440) and len(png) > 20_000

    chart.hover()
    name, svg = download(page, svg_button, tmp_path, "chart.svg")
    text = svg.decode("utf-8")
    assert name == "attnlab-masking-lmask-chart-weights.svg"
    assert text.lstrip().startswith("<svg") and 'width="1280"' in text and 'height="720"' in text
    assert "heatmap" in text or "<image" in text  # the heatmap itself, not an empty frame
    # the SVG click borrowed Plotly's button: the next PNG is a PNG again
    chart.hover()
    _, again = download(page, png_button, tmp_path, "again.png")
    assert again[:8] == b"\x89PNG\r\n\x1a\n"

    button = page.get_by_role("button", name="下载为笔记本")
    name, data = download(page, button, tmp_path, "view.ipynb")
    notebook = json.loads(data)
    assert name == "attnlab-masking.ipynb" and notebook["nbformat"] == 4
    assert notebook["metadata"]["attnlab"]["lang"] == "zh"
    setup = "".join(cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code")
    assert "palette.use('cb')" in setup and "<BOS> I like you <EOS>" in setup
