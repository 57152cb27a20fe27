"""Each view of the Real model and Attention file pages: its notebook draws the page's charts, with the same numbers.

The notebook's cells run here, in-process (the kernel test runs four notebooks in a real kernel); the page is
opened through AppTest with the same link.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.links import REAL_VIEWS, SOURCE_VIEWS
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
