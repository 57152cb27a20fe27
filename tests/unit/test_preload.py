"""The chart library's preload names the module Streamlit's own frontend loads, in a script that imports only it."""

from __future__ import annotations

import json
import re

from attnlab.figures.prebuilt import BASE_LAYOUT, TEMPLATE
from attnlab.ui.app import first_screen, preload, viewport


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


def test_the_faces_kept_from_plotly_are_the_frontends_formula_code_and_icon_faces_and_no_charts():
    """The faces named by NOT_IN_CHARTS are the frontend's own @font-face families for formulas, code and icons, and
    no chart draws in one: a Streamlit upgrade that renamed them would leave Plotly drawing charts again as they load,
    and a chart font among them would leave its labels measured in a fallback face (`preload` says why)."""
    css = "\n".join(p.read_text(encoding="utf-8") for p in (preload.FRONTEND_JS.parent / "css").glob("index.*.css"))
    families = set(re.findall(r"@font-face\{[^}]*?font-family:\s*\"?([^;\"}]+)", css))
    pattern = re.compile(preload.NOT_IN_CHARTS.strip("/"))
    hidden = {family for family in families if pattern.search(family)}
    assert {"Source Code Pro", "KaTeX_Main", "KaTeX_Math", "KaTeX_Size1", "KaTeX_AMS"} <= hidden
    assert families - hidden == {"Source Sans", "Source Serif"}  # the body fonts: a themed chart may draw in them
    chart_fonts = [BASE_LAYOUT["font"]["family"], TEMPLATE.layout.font.family]
    assert all(not pattern.search(name.strip()) for fonts in chart_fonts for name in fonts.split(","))
    html = preload.script("PlotlyChart.abc.js")
    assert preload.NOT_IN_CHARTS in html and "NOT_IN_CHARTS" not in html.replace(preload.NOT_IN_CHARTS, "")


def test_every_run_holds_placeholders_still_and_wraps_button_rows_with_or_without_the_chart_module(monkeypatch):
    sent = []
    monkeypatch.setattr(preload.st, "html", lambda body, **kw: sent.append((body, kw)))
    monkeypatch.setattr(preload, "plotly_module", lambda: "PlotlyChart.abc.js")
    preload.charts()
    monkeypatch.setattr(preload, "plotly_module", lambda: None)
    preload.charts()
    (with_module, kw), (without, kw_without) = sent
    assert with_module == preload.STILL + preload.WRAP + preload.UNSEEN + preload.script("PlotlyChart.abc.js")
    assert kw == {"unsafe_allow_javascript": True}
    assert without == preload.STILL + preload.WRAP + preload.UNSEEN  # styles only: Streamlit keeps it out of the flow
    assert kw_without == {}
    assert 'data-testid="stSkeleton"' in preload.STILL and "animation:none" in preload.STILL
    assert '[data-testid="stButtonGroup"]>div' in preload.WRAP and "flex-wrap:wrap" in preload.WRAP


def test_what_shows_nothing_is_named_as_streamlit_names_its_elements():
    """`UNSEEN` names the probe's and the first screen's components by the class Streamlit's frontend gives a keyed
    element (`st-key-`, each character outside letters, digits, _ and - as a hyphen)."""
    assert preload.key_class("app.width_probe") == "st-key-app-width_probe"
    assert preload.key_class(" a.b c/d_e-f ") == "st-key-a-b-c-d_e-f"
    for key in (viewport.KEY, first_screen.SIGNAL):
        assert f".{preload.key_class(key)}" in preload.UNSEEN
    assert ':not(:has(>[data-testid="stHtml"]>:not(script,style)))' in preload.UNSEEN  # only scripts and styles
    assert preload.UNSEEN.endswith("{display:none}</style>")
