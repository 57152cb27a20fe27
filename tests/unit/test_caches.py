"""Every cache is bounded: a server shared by a class must not grow with the number of distinct inputs it sees."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.joinpath("attnlab").rglob("*.py"), *ROOT.joinpath("views").glob("*.py"), ROOT / "app.py"])
UNBOUNDED_OK = {  # caches whose keys come from a fixed, small set, never from user input
    ("catalog", "attnlab/ui/app/i18n.py"),  # one entry per language
    ("expanded_scale", "attnlab/figures/prebuilt.py"),  # one entry per palette colour scale
}


def cached_functions() -> list[tuple[str, str, ast.expr, ast.FunctionDef]]:
    """(function name, file, decorator, function) for every cached function in the app."""
    found = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for deco in node.decorator_list:
                    text = ast.unparse(deco)
                    if any(name in text for name in ("cache_resource", "cache_data", "functools.cache", "lru_cache")):
                        found.append((node.name, str(path.relative_to(ROOT)), deco, node))
    return found


CACHED = cached_functions()


def test_the_audit_sees_the_caches():
    assert len(CACHED) >= 8


@pytest.mark.parametrize(("name", "file", "deco", "fn"), CACHED, ids=[f"{f}:{n}" for n, f, _, _ in CACHED])
def test_every_cache_is_bounded(name, file, deco, fn):
    takes_nothing = not (fn.args.args or fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg)
    bounded = isinstance(deco, ast.Call) and any(k.arg in ("max_entries", "maxsize") for k in deco.keywords)
    assert takes_nothing or bounded or (name, file) in UNBOUNDED_OK, f"{file}:{name} caches without a bound"
