"""Notebooks that rebuild a page's figures from its link: `from_query(page, query)` (contract 10).

The query is read with the page's own Params (`attnlab.links`), so a value the page cannot honour falls back to
what the page uses, and a markdown cell says so. The notebook then installs attnlab where it is missing, runs
the page's computation through the library and draws each figure with attnlab's own figure functions (each
figure carries its template; nothing global is set but the palette the link names), with a sentence in the
link's language above each. Choices the contract leaves open: `page` is the registry's URL path ("" and
"playground" both name the Playground); an unknown page, a query that is not a string, or a query with a piece
that is no `name=value` raises ValueError naming it; a bad value is replaced as on the page, never raised. The
Benchmark page's notebook runs the page's sweep where the notebook runs (timings are a machine's own; the
recorded GPU files are the page's, not the library's).
"""

from __future__ import annotations

from typing import Any

from attnlab import links
from attnlab.notebook.cells import code_span, digest, lit, notebook, words
from attnlab.notebook.explore import EXPLORE
from attnlab.notebook.kvcache import KV
from attnlab.notebook.lessons import LESSONS
from attnlab.notebook.lm import LM_RECIPES
from attnlab.notebook.recipe import Recipe

RECIPES: dict[str, Recipe] = {**EXPLORE, **LESSONS, **KV, **LM_RECIPES}
PAGES: tuple[str, ...] = tuple(RECIPES)
PLACEHOLDER = "path/to/attnlab"  # where a copy of the repository (or a built wheel) is: edited by the user
INSTALL = f"""ATTNLAB = {PLACEHOLDER!r}  # only if attnlab is missing: a clone of the repository or a wheel
try:
    import attnlab
except ImportError:
    %pip install "{{ATTNLAB}}[notebook]"
    import attnlab
"""


def canonical(page: str) -> str:
    """The page's URL path as the app serves it: "" for the Playground (the default page), else its path."""
    name = page.strip("/")
    return "" if name in ("", "playground") else name


def recipe_of(page: str) -> Recipe:
    """The recipe of a page named by its URL path ("" is the Playground); ValueError naming the pages otherwise."""
    if not isinstance(page, str):
        raise ValueError(f"page must be a URL path (a string), got {type(page).__name__}")
    name = canonical(page) or "playground"
    if name not in RECIPES:
        raise ValueError(f"unknown page {page!r}: pages with figures are {', '.join(repr(p) for p in PAGES)}")
    return RECIPES[name]


def values_of(recipe: Recipe, query: str) -> tuple[dict[str, Any], list[links.Replaced]]:
    """The page's values for the link (one flat dict, the app's `lang` and `palette` in it) and what was replaced."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a URL query string, got {type(query).__name__}")
    raw = links.split_query(query)
    scoped, replaced = links.read(("app", *recipe.scopes), raw)
    v: dict[str, Any] = {name: value for scope in scoped.values() for name, value in scope.items()}
    v["edits"] = raw.get("edits", "")
    v["link"] = raw  # what the link itself said: a page's fall-backs may depend on which names it gave
    from attnlab.attnexamples import EXAMPLES  # the models' adapters, only for the page that opens them

    if recipe.file == "attention_file" and "text" not in raw and v["source"] in EXAMPLES:
        v["text"] = EXAMPLES[v["source"]].text  # a link naming an example but no text: that example's input
    replaced += recipe.fix(v)
    return v, replaced


def intro(recipe: Recipe, page: str, query: str, w: dict[str, str]) -> str:
    """The title, what this notebook is, and the link it was written from (as literal text)."""
    title = w[f"nav.{recipe.file}"]
    link = f"/{canonical(page)}?{query.lstrip('?')}" if query else f"/{canonical(page)}"
    return f"# attnlab · {title}\n\n{w['intro']}\n\n{w['link']} {code_span(link, 400)}"


def notes(replaced: list[links.Replaced], w: dict[str, str]) -> str | None:
    """What the link asked for that could not be honoured, and what the notebook uses instead."""
    if not replaced:
        return None
    lines = [
        f"- {w['replaced'].format(asked=code_span(f'{r.name}={r.raw}', 60), used=code_span(r.used))}" for r in replaced
    ]
    return f"**{w['replaced_title']}**\n\n" + "\n".join(lines)


def caption(key: str, w: dict[str, str], number: int) -> str:
    """The sentence above a figure: a stage's title and the shared note, or the figure's own sentence."""
    if key.startswith("stages."):
        return f"### {number}. {w[key]}\n\n{w['stage_note']}"
    return f"### {number}. {w[key + '_title']}\n\n{w[key]}"


def from_query(page: str, query: str) -> str:
    """A Jupyter notebook (nbformat 4 JSON) that rebuilds the figures `page` shows for the URL query `query`."""
    recipe = recipe_of(page)
    v, replaced = values_of(recipe, query)
    lang = v["lang"]
    w = words(lang)
    cells: list[tuple[str, str, dict | None]] = [("markdown", intro(recipe, page, query, w), None)]
    said = notes(replaced, w)
    if said:
        cells.append(("markdown", said, None))
    cells.append(("markdown", w["install"].format(name=code_span("ATTNLAB"), placeholder=code_span(PLACEHOLDER)), None))
    cells.append(("code", INSTALL, None))
    cells.append(("markdown", w["setup"], None))
    cells.append(("code", recipe.setup(v), None))
    for number, fig in enumerate(recipe.figures(v), start=1):
        cells.append(("markdown", caption(fig.key, w, number), None))
        cells.append(("code", fig.code, {"attnlab": {"figure": fig.key}}))
    meta_page = canonical(page)
    cells[0] = ("markdown", cells[0][1], {"attnlab": {"page": meta_page, "view": digest(meta_page, query)}})
    return notebook(cells, lang)


__all__ = ["PAGES", "PLACEHOLDER", "from_query", "lit"]
