"""`palette=cb` switches every heatmap and line of every page to the colour-blind-safe palette, and it sticks."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from attnlab.figures.palette import COLOUR_BLIND, DEFAULT, TRANSPARENT, Palette
from attnlab.ui.app.registry import PAGES
from tests.app.charts import figures
from tests.app.conftest import assert_clean, open_page

SCALE_FIELDS = ("signed", "prob", "positive", "heads")


def scales(palette: Palette) -> set[tuple]:
    """The palette's colour scales as Plotly writes them out (named scales expanded)."""
    out = set()
    for name in SCALE_FIELDS:
        scale = go.Heatmap(colorscale=getattr(palette, name)).colorscale
        out.add(tuple(tuple(stop) for stop in scale))
    fixed = (palette.blocked, palette.line(0))  # the blocked layer and a one-head strip are single colours
    return out | {((0.0, c), (1.0, c)) for c in fixed}


def colours(palette: Palette) -> set[str]:
    """Every plain colour the palette hands out."""
    named = (palette.blocked, palette.blocked_text, palette.rule, palette.highlight, palette.neutral, palette.grid)
    return {c.lower() for c in (*named, *palette.lines)}


def used(fig: dict) -> tuple[set[tuple], set[str]]:
    """The colour scales and plain colours one figure uses."""
    found_scales, found_colours = set(), set()
    for trace in fig["data"]:
        if "colorscale" in trace:
            found_scales.add(tuple(tuple(stop) for stop in trace["colorscale"]))
        if "colorscale" in (trace.get("marker") or {}):  # points filled by a value (a query-key map's positions)
            found_scales.add(tuple(tuple(stop) for stop in trace["marker"]["colorscale"]))
        for part in ("line", "marker", "textfont"):
            colour = (trace.get(part) or {}).get("color")
            named = [colour] if isinstance(colour, str) else [c for c in colour or [] if isinstance(c, str)]
            found_colours |= {c.lower() for c in named} - {TRANSPARENT}
            line = (trace.get(part) or {}).get("line") or {}  # a marker's outline
            if isinstance(line.get("color"), str):
                found_colours.add(line["color"].lower())
    for shape in fig["layout"].get("shapes", []):
        if (shape.get("line") or {}).get("color"):
            found_colours.add(shape["line"]["color"].lower())
    return found_scales, found_colours


def test_the_two_palettes_differ_where_colour_vision_matters():
    for name in ("signed", "prob", "heads"):  # red-blue, blues, a rainbow -> blue-orange, Cividis, Okabe-Ito
        assert getattr(COLOUR_BLIND, name) != getattr(DEFAULT, name)
    assert set(COLOUR_BLIND.lines).isdisjoint(DEFAULT.lines)


@pytest.mark.parametrize("spec", PAGES, ids=[spec.file for spec in PAGES])
def test_palette_cb_colours_every_chart_of_the_page(spec):
    at = open_page(spec.path, palette="cb")
    assert_clean(at)
    assert at.query_params["palette"] == "cb"
    for fig in figures(at):
        found_scales, found_colours = used(fig)
        assert found_scales <= scales(COLOUR_BLIND), spec.file
        assert found_colours <= colours(COLOUR_BLIND), (spec.file, found_colours - colours(COLOUR_BLIND))


def test_the_palette_follows_the_visitor_to_other_pages():
    at = open_page(text="I like you", palette="cb", causal="true")
    at.switch_page("views/multihead.py").run()
    assert_clean(at)
    assert at.query_params["palette"] == "cb"
    assert {s for fig in figures(at) for s in used(fig)[0]} <= scales(COLOUR_BLIND)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_palette_cb_colours_the_language_models_sections_when_open(lang):
    """/lm's sections below the fold (lens, attribution, branches) are drawn only when the link opens them: the page's
    default link above never draws them, so they are checked here, open, and against the default palette too."""
    query = dict(lang=lang, open="lens,attribution,branches", top_k="12", temperature="0.8", pick="2.3")
    by_palette = {}
    for name, palette in (("cb", COLOUR_BLIND), ("default", DEFAULT)):
        at = open_page("views/lm.py", palette=name, **query)
        assert_clean(at)
        charts = figures(at)
        keys = [c.proto.id for c in at.get("plotly_chart")]
        assert all(any(k.endswith(f"lm.{key}") for k in keys) for key in ("lens_chart", "parts_chart", "branch_chart"))
        for fig in charts:
            found_scales, found_colours = used(fig)
            assert found_scales <= scales(palette), name
            assert found_colours <= colours(palette), (name, found_colours - colours(palette))
        by_palette[name] = [used(fig) for fig in charts]
    changed = [a != b for a, b in zip(by_palette["cb"], by_palette["default"], strict=True)]
    assert sum(changed) >= len(changed) - 1  # every chart but the painted text (Viridis in both palettes) changes
