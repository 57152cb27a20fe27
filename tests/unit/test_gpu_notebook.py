"""notebooks/gpu_benchmark.ipynb runs top to bottom in a real kernel, with --dry-run swapped in (contract 11).

The install cell is a no-op here (attnlab is importable from the repository root the kernel starts in), the
record cell runs the preset's dry run, the figures are attnlab's own, and the download cell offers the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from attnlab.bench.results import load_results

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "gpu_benchmark.ipynb"
PLOTLY = "application/vnd.plotly.v1+json"


def outputs(cell) -> str:
    """Everything a cell printed or displayed, as one text."""
    return "\n".join(json.dumps(out) for out in cell.get("outputs", []))


def test_the_notebook_records_a_dry_run_draws_it_and_offers_the_file(tmp_path):
    from nbclient import NotebookClient  # imported here: collecting, which every worker does, skips its 0.3 s

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    (params,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    out = tmp_path / "record.json"
    assert "DRY_RUN = False" in params.source and 'REPO_URL = ""' in params.source
    params.source = params.source.replace("DRY_RUN = False", "DRY_RUN = True")
    params.source = params.source.replace('OUT = "attnlab-record.json"', f"OUT = {str(out)!r}")
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    install = next(c for c in code if "pip" in c.source)
    assert f"attnlab from {ROOT / 'attnlab' / '__init__.py'}" in outputs(install)  # nothing installed: it was there
    run = load_results(out.name, out.read_bytes())
    assert run.env["dry_run"] and len(run.results) > 100
    figures = [o for c in code for o in c.outputs if PLOTLY in o.get("data", {})]
    assert len(figures) == 4  # throughput and time, without and with the causal mask
    titles = [f["data"][PLOTLY]["layout"]["title"]["text"] for f in figures]
    assert titles[0].startswith("Throughput · bfloat16, head size 16, no mask")
    assert str(out.name) in outputs(code[-1])  # the download: a link to the file outside Colab
