"""Which attnlab modules are the core and which draw: read from the file tree, importing nothing of attnlab's."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnlab"
UI_LAYERS = ("attnlab.ui", "attnlab.figures", "attnlab.export_html")  # the only places that may draw
TOOLING = ("attnlab.testing",)  # drives a served app from tests and scripts; reads Streamlit's wire format


def module_name(path: Path) -> str:
    """attnlab/bench/harness.py -> attnlab.bench.harness."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = sorted(module_name(p) for p in PACKAGE.rglob("*.py"))
CORE = [m for m in MODULES if not m.startswith(UI_LAYERS + TOOLING)]
