"""The chart library's preload names the module Streamlit's own frontend loads, in a script that imports only it."""

from __future__ import annotations

import json

from attnlab.ui.app import preload


def test_the_installed_frontend_has_one_plotly_module_and_its_entry_imports_it():
    module = preload.plotly_module()
    assert module is not None, f"no PlotlyChart.*.js in {preload.FRONTEND_JS}: did a Streamlit upgrade rename it?"
    entry = "\n".join(e.read_text(encoding="utf-8") for e in preload.FRONTEND_JS.glob("index.*.js"))
    assert f"./{module}" in entry  # the very file the frontend imports, so the browser keeps one copy of it


def test_the_script_imports_exactly_that_module_beside_the_entry_script():
    html = preload.script("PlotlyChart.abc.js")
    assert html.startswith("<script>") and html.endswith("</script>")
    assert f"new URL({json.dumps('PlotlyChart.abc.js')}, entry.src)" in html and "MODULE" not in html


def test_a_frontend_without_that_module_gets_no_preload(monkeypatch, tmp_path):
    monkeypatch.setattr(preload, "FRONTEND_JS", tmp_path)
    preload.plotly_module.cache_clear()
    try:
        assert preload.plotly_module() is None
        (tmp_path / "PlotlyChart.a.js").touch()
        (tmp_path / "PlotlyChart.b.js").touch()
        assert preload.plotly_module() is None  # two builds side by side: which one the frontend loads is unknown
    finally:
        preload.plotly_module.cache_clear()
