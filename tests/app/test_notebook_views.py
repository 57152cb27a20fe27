"""Each view of the Real model and Attention file pages: its notebook draws the page's charts, with the same numbers.

The notebook's cells run here, in-process (the kernel test runs four notebooks in a real kernel); the page is
opened through AppTest with the same link.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.links import REAL_VIEWS, SOURCE_VIEWS
from attnlab.links.explore import MULTIHEAD_SECTIONS
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, open_page
from tests.unit.test_notebook import cells, run

CASES = [
    ("views/real_model.py", "real-model", {"view": v, "layer": "2", "head": "3", "q": "2"}) for v in REAL_VIEWS
] + [
    ("views/attention_file.py", "attention-file", {"source": "decoder", "view": v, "layer": "2", "head": "1", "q": "3"})
    for v in SOURCE_VIEWS
]


def heatmaps(spec: dict) -> list[np.ndarray]:
    return [_decode(tr["z"]) for tr in spec["data"] if tr.get("type") == "heatmap" and tr.get("name") != "blocked"]


@pytest.mark.parametrize(("view", "page", "query"), CASES, ids=[f"{p}-{q['view']}" for _, p, q in CASES])
def test_a_views_notebook_draws_the_pages_charts_with_its_numbers(view, page, query):
    at = open_page(view, **query)
    assert_clean(at)
    namespace: dict = {}
    drawn = []
    for cell in cells(page, "&".join(f"{k}={v}" for k, v in query.items())):
        if cell.cell_type == "code":
            value = run(cell.source, namespace)
            if cell.metadata.get("attnlab", {}).get("figure"):
                drawn.append(value.to_dict())
    on_page = figures(at)
    assert len(drawn) == len(on_page) > 0
    page_maps = [m for spec in on_page for m in heatmaps(spec)]
    notebook_maps = [m for spec in drawn for m in heatmaps(spec)]
    assert len(page_maps) == len(notebook_maps)
    for ours, theirs in zip(notebook_maps, page_maps, strict=True):
        assert ours.shape == theirs.shape and np.allclose(ours, theirs, atol=1e-5, equal_nan=True)


def arrays(spec: dict) -> list[np.ndarray]:
    """Every number series a figure draws: heatmap cells, and the y values of lines and bars."""
    out = []
    for tr in spec["data"]:
        kind = tr.get("type", "scatter")
        if kind == "heatmap" and tr.get("name") != "blocked":
            out.append(_decode(tr["z"]))
        elif kind in ("scatter", "bar") and "y" in tr and len(np.atleast_1d(_decode(tr["y"]))) > 2:
            out.append(_decode(tr["y"]))
    return out


PAGE_VIEWS = {  # every other page with figures, at its defaults (the Benchmark draws only after a click)
    "": "views/playground.py",
    "present": "views/present.py",
    "multihead": "views/multihead.py",
    "neuron": "views/neuron.py",
    "cross": "views/cross.py",
    "decoder": "views/decoder.py",
    "soft-dictionary": "views/soft_dictionary.py",
    "scaling": "views/scaling.py",
    "positions": "views/positions.py",
    "masking": "views/masking.py",
    "cost": "views/cost.py",
    "tiled": "views/tiled.py",
    "kv-cache": "views/kv_cache.py",
}


# The notebook draws a page's folded sections too (a notebook has no fold): those pages are opened with them open
OPENED = {"multihead": ",".join(MULTIHEAD_SECTIONS), "kv-cache": "mla", "decoder": "training"}
PAGE_CASES = [(page, {"lang": "zh", **({"open": OPENED[page]} if page in OPENED else {})}) for page in PAGE_VIEWS] + [
    ("", {"compare": "causal", "text": "a b c d"}),  # "Compare with…": both runs and their difference, per stage
    ("", {"compare": "seed", "heads": "1", "head": "1"}),
]


@pytest.mark.parametrize(("page", "query"), PAGE_CASES, ids=[f"{p or 'playground'}-{len(q)}" for p, q in PAGE_CASES])
def test_every_number_a_notebook_draws_is_drawn_by_its_page(page, query):
    at = open_page(PAGE_VIEWS[page], **query)
    assert_clean(at)
    on_page = [a for spec in figures(at) for a in arrays(spec)]
    namespace: dict = {}
    drawn = []
    for cell in cells(page, "&".join(f"{k}={v}" for k, v in query.items()).replace(" ", "+")):
        if cell.cell_type == "code":
            value = run(cell.source, namespace)
            if cell.metadata.get("attnlab", {}).get("figure") and value is not None:
                drawn += arrays(value.to_dict())
    assert drawn
    for ours in drawn:
        assert any(
            ours.shape == theirs.shape and np.allclose(ours, theirs, atol=1e-5, equal_nan=True) for theirs in on_page
        ), (page, ours.shape)
