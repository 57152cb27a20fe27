"""The shape the code promises: the core needs only torch and numpy, imports point one way, every page is registered."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from attnlab.ui.app.registry import PAGES
from tests.conftest import FRESH_GROUP
from tests.fresh import answer
from tests.layers import CORE, MODULES, PACKAGE, ROOT, UI_LAYERS

MAX_MODULE_LINES = 350
MAX_VIEW_LINES = 80  # a view is an entry: its page's sections live in attnlab/ui/pages/<name>/


def imports_in(path: Path) -> set[str]:
    """Every module a file imports, read from its source (no import is executed); `from a import b` gives a.b too."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in MODULES}
    return found


def imports_of(module: str) -> set[str]:
    """Every module an attnlab module imports."""
    path = ROOT / (module.replace(".", "/") + ".py")
    return imports_in(path if path.exists() else ROOT / module.replace(".", "/") / "__init__.py")


@FRESH_GROUP
def test_the_whole_core_imports_without_streamlit_or_plotly(fresh_answers):
    """A fresh interpreter imports every core module, and neither Streamlit nor Plotly comes with them."""
    assert len(CORE) > 20 and answer(fresh_answers, "core_imports") == []


@pytest.mark.parametrize("module", CORE)
def test_core_modules_never_reach_up_into_the_ui(module):
    assert not [m for m in imports_of(module) if m.startswith(UI_LAYERS) or m.split(".")[0] in ("streamlit", "plotly")]


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("attnlab.figures")])
def test_figures_know_nothing_of_streamlit(module):
    assert not [m for m in imports_of(module) if m.startswith("attnlab.ui") or m.split(".")[0] == "streamlit"]


@pytest.mark.parametrize("module", MODULES)
def test_every_module_stays_short(module):
    """A module longer than MAX_MODULE_LINES holds more than one job: split it along them."""
    path = ROOT / (module.replace(".", "/") + ".py")
    path = path if path.exists() else ROOT / module.replace(".", "/") / "__init__.py"
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)} has {lines} lines"


@pytest.mark.parametrize("module", MODULES)
def test_every_module_says_its_job_in_its_first_line(module):
    path = ROOT / (module.replace(".", "/") + ".py")
    path = path if path.exists() else ROOT / module.replace(".", "/") / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and doc.splitlines()[0].strip().endswith((".", ":")), module


def test_every_view_is_registered_and_every_registered_page_exists():
    files = sorted(p.stem for p in (ROOT / "views").glob("*.py"))
    assert sorted(spec.file for spec in PAGES) == files
    assert len({spec.url_path for spec in PAGES}) == len(PAGES)


@pytest.mark.parametrize("spec", PAGES, ids=[spec.file for spec in PAGES])
def test_a_page_is_named_by_its_url_path_and_its_view_is_a_thin_entry(spec):
    assert spec.file == spec.url_path.replace("-", "_")
    view = ROOT / spec.path
    lines = len(view.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_VIEW_LINES, f"{spec.path} has {lines} lines: move its sections to attnlab/ui/pages/{spec.file}/"
    pages = {m.split(".")[3] for m in imports_in(view) if m.startswith("attnlab.ui.pages.")}
    assert pages <= {spec.file}, f"{spec.path} imports another page's package: {pages - {spec.file}}"


PAGE_PACKAGES = sorted(p.name for p in (PACKAGE / "ui" / "pages").iterdir() if (p / "__init__.py").exists())


def test_every_page_package_belongs_to_a_registered_page():
    assert set(PAGE_PACKAGES) <= {spec.file for spec in PAGES}


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("attnlab.ui.pages.")])
def test_a_page_package_imports_the_shared_layers_never_another_page(module):
    own = module.split(".")[3]
    others = {m.split(".")[3] for m in imports_of(module) if m.startswith("attnlab.ui.pages.")} - {own}
    assert not others, f"{module} imports the page package(s) {sorted(others)}"


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith(("attnlab.ui.app", "attnlab.ui.parts"))])
def test_the_shared_layers_know_no_page_and_the_machinery_knows_no_part(module):
    imported = imports_of(module)
    assert not [m for m in imported if m.startswith("attnlab.ui.pages")], module
    if module.startswith("attnlab.ui.app"):
        assert not [m for m in imported if m.startswith("attnlab.ui.parts")], module


def import_graph() -> dict[str, set[str]]:
    """attnlab's modules and which of them each imports (at module level or inside a function alike)."""
    return {m: {i for i in imports_of(m) if i in MODULES and i != m} for m in MODULES}


def test_no_import_cycle_anywhere_in_attnlab():
    graph, done, cycles = import_graph(), set(), []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append(path[path.index(module) :] + [module])
            return
        if module in done:
            return
        for nxt in sorted(graph[module]):
            visit(nxt, [*path, module])
        done.add(module)

    for module in MODULES:
        visit(module, [])
    assert not cycles, cycles[:3]


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "scripts").glob("*.py")))
def test_scripts_reach_attnlab_as_an_installed_package_not_by_editing_sys_path(script):
    tree = ast.parse((ROOT / "scripts" / script).read_text(encoding="utf-8"))
    edits = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and ast.unparse(node.func.value) == "sys.path"
        and ("ROOT" in ast.unparse(node) or "parent" in ast.unparse(node))
    ]
    assert not edits, f"{script} puts the repository on sys.path at line(s) {edits}"


DOC_ROOTS = r"attnlab|views|scripts|tests|deploy|data|notebooks|\.streamlit|\.ci"
DOC_PATH = re.compile(rf"`((?:{DOC_ROOTS})/[\w./-]*|[\w-]+\.(?:py|md|txt|toml))`")  # a path in a code span


@pytest.mark.parametrize("doc", ["README.md", "ARCHITECTURE.md"])
def test_every_path_the_docs_name_exists(doc):
    """A path in a code span exists; a bare file name (`limits.py`) names some file of the repository."""
    named = {m.group(1).rstrip("/") for m in DOC_PATH.finditer((ROOT / doc).read_text(encoding="utf-8"))}
    files = {path.name for path in ROOT.rglob("*") if ".git" not in path.parts}
    missing = sorted(
        p for p in named if "*" not in p and "<" not in p and not ((ROOT / p).exists() if "/" in p else p in files)
    )
    assert not missing, f"{doc} names paths that do not exist: {missing}"


def test_the_architecture_modules_table_names_every_module():
    """One table says what lives where (ARCHITECTURE.md's Modules; the README points to it): every module in it."""
    doc = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = doc[doc.index("\n## Modules\n") : doc.index("\n## ", doc.index("\n## Modules\n") + 1)]
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if path.name == "__init__.py" or "locales" in rel.parts:
            continue
        whole = f"`{rel.as_posix()}`" in table or f"`{rel.as_posix()}`," in table
        in_package = len(rel.parts) > 2 and f"`{rel.parent.as_posix()}/`" in table and f"`{path.stem}`" in table
        if not (whole or in_package):
            missing.append(rel.as_posix())
    assert not missing, f"ARCHITECTURE.md's Modules table does not name: {missing}"
