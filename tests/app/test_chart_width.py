"""The width the browser reported reaches the figures (issue 54): a phone's Playground stacks its heads."""

from __future__ import annotations

import json

import numpy as np
import pytest
import streamlit as st

from attnlab.testing import app_test
from attnlab.ui.app import viewport
from attnlab.ui.app.viewport import BAND
from tests.app.charts import figures, heatmap_values

LINK = dict(text="<BOS> 我 喜欢 你 ， 你 也 喜欢 我 <EOS>", heads="4", kv_heads="2", rope="half", d_model="16")


def playground(band: int | None):
    """The issue's phone link in a session whose browser reported `band` (None: has not yet)."""
    at = app_test(url_path="playground")
    if band is not None:
        at.session_state[BAND] = band
    at.query_params.update(LINK, lang="zh")
    return at.run()


def rows_of_panels(spec: dict) -> int:
    return len({tuple(axis["domain"]) for name, axis in spec["layout"].items() if name.startswith("yaxis")})


def test_a_phone_gets_one_head_per_row_with_the_same_numbers_as_a_desktop():
    desktop, phone = playground(None), playground(340)
    assert not desktop.exception and not phone.exception
    grids = [i for i, spec in enumerate(figures(desktop)) if sum(k.startswith("xaxis") for k in spec["layout"]) == 4]
    assert grids  # the per-head stages
    for i in grids:
        square = len(figures(phone)[i]["data"][0]["x"]) == 12  # the heads' scores and weights; RoPE's q, k have 4
        assert rows_of_panels(figures(desktop)[i]) == 1 and rows_of_panels(figures(phone)[i]) == (4 if square else 2)
        for a, b in zip(heatmap_values(desktop, i), heatmap_values(phone, i), strict=True):
            assert np.array_equal(a, b, equal_nan=True)


def test_the_width_probe_is_mounted_only_once_the_run_has_named_its_page(monkeypatch):
    """The probe's report is a rerun, sent for the page the browser last heard of; before the run's navigation message
    that is the entry script, which Streamlit serves as the default page. Mounted before `st.navigation`, a probe that
    reported early (a width other than the guessed one, a server slow to reach the page) took a visitor of
    /soft-dictionary to the Playground."""
    calls = []
    navigation, mount = st.navigation, viewport._component
    monkeypatch.setattr(st, "navigation", lambda *a, **kw: calls.append("navigation") or navigation(*a, **kw))
    monkeypatch.setattr(viewport, "_component", lambda: calls.append("probe") or mount())
    at = app_test(url_path="soft-dictionary")
    at.query_params.update(lang="zh", task="dict-weighted")
    at.run()
    assert not at.exception and at.title[0].value == "软字典"
    assert calls and calls.index("navigation") < calls.index("probe"), calls


@pytest.mark.parametrize("url_path", ["playground", "cost"])  # prebuilt heatmaps; Plotly figures with a theme pass
def test_on_a_phone_no_chart_takes_a_drag_so_a_swipe_scrolls_and_on_a_desktop_a_drag_still_zooms(url_path):
    def dragmodes(band: int) -> list:
        at = app_test(url_path=url_path)
        at.session_state[BAND] = band
        at.run()
        assert not at.exception
        return [spec["layout"].get("dragmode", "zoom") for spec in figures(at)]

    phone, desktop = dragmodes(340), dragmodes(800)
    assert phone and all(mode is False for mode in phone), phone
    assert len(desktop) == len(phone) and False not in desktop, desktop


@pytest.mark.parametrize("url_path", ["playground", "cost"])
def test_a_phones_toolbar_keeps_the_images_and_drops_zoom_and_pan_which_would_take_the_swipe_back(url_path):
    def removed(band: int) -> list[set]:
        at = app_test(url_path=url_path)
        at.session_state[BAND] = band
        at.run()
        assert not at.exception
        configs = [json.loads(chart.proto.config) for chart in at.get("plotly_chart")]
        assert configs and all(config["toImageButtonOptions"]["format"] == "png" for config in configs)
        return [set(config["modeBarButtonsToRemove"]) for config in configs]

    moving = {"zoom2d", "pan2d", "zoomIn2d", "zoomOut2d", "resetScale2d"}
    phone, desktop = removed(340), removed(800)
    assert all(moving <= buttons and "toImage" not in buttons for buttons in phone), phone
    assert len(desktop) == len(phone) and not any(moving & buttons for buttons in desktop), desktop
