"""The notebooks of four pages run top to bottom in a real Jupyter kernel and draw the numbers their pages draw.

One kernel for all four (their cells run one notebook after the other, as a user would run them in turn), so
the test pays for one kernel start, and AppTest opens the pages while the kernel works. Plotly's renderer is
set by `PLOTLY_RENDERER` in the kernel's environment (the notebooks set none): each figure comes back as its
JSON, and its heatmaps are compared with the heatmaps AppTest's page sent for the same link, chart by chart.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from attnlab.notebook import from_query
from tests.app.charts import _decode, figures
from tests.app.conftest import assert_clean, open_page

nbformat = pytest.importorskip("nbformat")

CASES = [  # (registry view, URL path, query): the four pages the issue names
    ("views/playground.py", "", "text=I+like+you+very+much&d_model=8&heads=2&causal=true&seed=3&lang=zh"),
    ("views/real_model.py", "real-model", "text=The+cat+sat.&view=head&layer=2&head=3&q=2"),
    ("views/decoder.py", "decoder", "model=2l&step=300&seq=k+3+x+m+k+3+x+m+k"),
    ("views/attention_file.py", "attention-file", "source=decoder&view=head&layer=2&head=1"),
]
PLOTLY = "application/vnd.plotly.v1+json"


def heatmaps(spec: dict) -> list[np.ndarray]:
    """The value heatmaps of one figure (the blocked-cell layer left out), as arrays."""
    return [_decode(tr["z"]) for tr in spec["data"] if tr.get("type") == "heatmap" and tr.get("name") != "blocked"]


def run_in_one_kernel(notebooks: list[dict]) -> list[list[dict]]:
    """Execute the notebooks' cells in one kernel, in turn; each notebook's figures, in order."""
    import nbclient  # imported here: collecting, which every worker does, skips its 0.3 s

    joined = nbformat.v4.new_notebook()
    joined.cells = [cell for nb in notebooks for cell in nb.cells]
    nbclient.NotebookClient(joined, timeout=120, kernel_name="python3", allow_errors=False).execute()
    out, at = [], 0
    for nb in notebooks:
        cells = joined.cells[at : at + len(nb.cells)]
        at += len(nb.cells)
        figs = [cell for cell in cells if cell.metadata.get("attnlab", {}).get("figure")]
        assert all(len(cell.outputs) == 1 and PLOTLY in cell.outputs[0].data for cell in figs)
        out.append([cell.outputs[0].data[PLOTLY] for cell in figs])
    return out


def test_four_pages_notebooks_run_in_a_kernel_and_draw_the_pages_numbers(monkeypatch):
    monkeypatch.setenv("PLOTLY_RENDERER", "plotly_mimetype")  # the kernel inherits it: figures come back as JSON
    notebooks = [nbformat.reads(from_query(path, query), as_version=4) for _, path, query in CASES]
    for nb in notebooks:
        nbformat.validate(nb)
    with ThreadPoolExecutor(1) as kernel:  # the kernel runs the notebooks while AppTest opens the pages here
        running = kernel.submit(run_in_one_kernel, notebooks)
        pages = [
            open_page(view, **dict(p.split("=") for p in query.replace("+", " ").split("&")))
            for view, _, query in CASES
        ]
        drawn = running.result()
    for (view, _, _), at, figs in zip(CASES, pages, drawn, strict=True):
        assert_clean(at)
        on_page = [m for spec in figures(at) for m in heatmaps(spec)]
        in_notebook = [m for spec in figs for m in heatmaps(spec)]
        assert len(on_page) == len(in_notebook) > 0, view
        for page_m, nb_m in zip(on_page, in_notebook, strict=True):
            assert page_m.shape == nb_m.shape, view
            assert np.allclose(page_m, nb_m, atol=1e-6, equal_nan=True), view
    zh = json.loads(from_query("", CASES[0][2]))
    assert zh["metadata"]["attnlab"]["lang"] == "zh"
