"""Every page with figures offers its notebook in the sidebar, and every chart's toolbar names its images."""

from __future__ import annotations

import json

from attnlab.ui.app.i18n import catalog
from tests.app.conftest import assert_clean, open_page


def notebook_buttons(at, lang: str) -> list:
    return [b for b in at.get("download_button") if b.proto.label == catalog(lang)["takeout.download"]]


def test_a_page_with_figures_offers_its_notebook_and_names_its_chart_images(lang):
    at = open_page("views/decoder.py", lang=lang)
    assert_clean(at)
    assert len(notebook_buttons(at, lang)) == 1
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    image = config["toImageButtonOptions"]
    assert image == {
        "format": "png",
        "filename": "attnlab-decoder-decoder-grid-0",
        "scale": 2,
        "width": 1280,
        "height": 720,
    }


def test_the_playground_names_itself_and_a_page_without_figures_offers_no_notebook():
    at = open_page(lang="zh")
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"]["filename"] == "attnlab-playground-st-x"
    assert len(notebook_buttons(at, "zh")) == 1
    overview = open_page("views/lessons.py")
    assert_clean(overview)
    assert notebook_buttons(overview, "en") == []
