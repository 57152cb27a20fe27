"""No module of attnlab imports itself back through others: imports form a graph without cycles."""

from __future__ import annotations

from tests.unit.test_architecture import MODULES, imports_of


def attnlab_imports(module: str) -> set[str]:
    """The attnlab modules a module imports (a name imported from a package counts when it is a submodule)."""
    found = set()
    for name in imports_of(module):
        found |= {name} & set(MODULES)
    return found - {module}


def test_attnlab_has_no_import_cycle():
    graph = {module: attnlab_imports(module) for module in MODULES}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path[path.index(module) :], module))
        if module not in done:
            for imported in sorted(graph[module]):
                visit(imported, (*path, module))
            done.add(module)

    for module in MODULES:
        visit(module, ())


def test_the_attention_file_writer_does_not_import_its_reader():
    assert "attnlab.attnfile.reader" not in imports_of("attnlab.attnfile.file")
    assert not {m for m in imports_of("attnlab.untrusted") if m.startswith(("attnlab.weights_io", "attnlab.attnfile"))}
