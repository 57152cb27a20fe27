"""Notebooks written from a link: valid nbformat 4 for every page with figures, hostile links inert, fall-backs said."""

from __future__ import annotations

import ast
import json

import nbformat
import pytest
import torch
from IPython.core.inputtransformer2 import TransformerManager

from attnlab import links
from attnlab.attnexamples import EXAMPLES
from attnlab.notebook import PAGES, PLACEHOLDER, from_query
from attnlab.notebook.cells import code_span, words
from attnlab.ui.app.registry import PAGES as REGISTRY

WITHOUT_FIGURES = {"lessons", "course"}  # the lessons overview and the Course page draw none
HOSTILE = "text=%3Cscript%3Ealert(1)%3C%2Fscript%3E%27%29%3Bimport+os%23&heads=zero&src=%60%60%60&lang=zh"


def cells(page: str, query: str = "") -> list[dict]:
    nb = nbformat.reads(from_query(page, query), as_version=4)
    nbformat.validate(nb)
    return nb.cells


def python(source: str) -> ast.Module:
    """A code cell as Python (IPython's `%pip` line turned into a call first)."""
    return ast.parse(TransformerManager().transform_cell(source))


def test_every_page_that_draws_figures_has_a_notebook():
    assert set(PAGES) == {spec.url_path for spec in REGISTRY} - WITHOUT_FIGURES
    assert from_query("", "") == from_query("playground", "")


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", links.LANGS)
def test_each_pages_notebook_is_nbformat_4_with_figure_cells_in_its_language(page, lang):
    got = cells(page, f"lang={lang}")
    figures = [c for c in got if c.cell_type == "code" and c.metadata.get("attnlab", {}).get("figure")]
    assert figures
    for cell in got:
        if cell.cell_type == "code":
            python(cell.source)
    markdown = "\n".join(c.source for c in got if c.cell_type == "markdown")
    assert words(lang)["intro"] in markdown and words(lang)["setup"] in markdown
    assert f"ATTNLAB = {PLACEHOLDER!r}" in got[[c.cell_type for c in got].index("code")].source


def test_a_hostile_link_becomes_string_literals_and_code_spans_and_its_bad_heads_fall_back_as_on_the_page():
    got = cells("", HOSTILE)
    setup = next(c.source for c in got if "run_lab" in c.source)
    tree = python(setup)
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert "<script>alert(1)</script>');import os#" in strings  # one literal, never code
    assert not any(isinstance(n, ast.Import) and n.names[0].name == "os" for n in ast.walk(tree))
    assert '#", 8, 2, False, 0' in setup  # heads=zero: the page's default of 2
    notes = next(c.source for c in got if c.cell_type == "markdown" and words("zh")["replaced_title"] in c.source)
    assert code_span("heads=zero") in notes and code_span("2") in notes  # the page's default, said in Chinese
    for cell in got:
        if cell.cell_type == "markdown":
            assert "<script>" not in cell.source.replace(code_span(f"/?{HOSTILE}", 400), "")


def test_code_spans_outlast_backticks_and_line_breaks():
    assert code_span("a ``` b\nc") == "```` a ``` b c ````"


def test_unknown_pages_and_queries_that_are_not_text_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown page 'nowhere'"):
        from_query("nowhere", "")
    with pytest.raises(ValueError, match="query must be"):
        from_query("", {"text": "x"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="page must be"):
        from_query(None, "")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="parameter 'heads' has no value"):
        from_query("", "text=a+b&heads")
    assert json.loads(from_query("", "?text=a+b&&heads=2&unknown=1"))  # empty pieces and unknown names: ignored


def test_a_decoder_link_names_its_checkpoint_and_an_example_without_text_starts_from_the_examples_input():
    got = cells("decoder", "model=1l&step=333&seq=a+b")
    setup = "".join(c.source for c in got if c.cell_type == "code")
    assert "'induction-1l', 333" in setup and "'a b'.split()" in setup
    notes = [c.source for c in got if c.cell_type == "markdown" and words("en")["replaced_title"] in c.source]
    assert len(notes) == 1 and code_span("step=333") in notes[0] and code_span("340") in notes[0]
    example = "".join(c.source for c in cells("attention-file", "source=decoder") if c.cell_type == "code")
    assert f"EXAMPLES['decoder'].build({EXAMPLES['decoder'].text!r})" in example


def test_the_links_app_settings_are_the_apps():
    from attnlab.figures.palette import PALETTES
    from attnlab.ui.app.i18n import LANGS
    from attnlab.ui.app.state import APP

    assert links.PALETTE_NAMES == tuple(PALETTES) and links.LANGS == LANGS
    ours = [(p.name, p.default, p.options) for p in links.params("app")]
    assert ours == [(p.name, p.default, p.options) for p in APP.params.values()]


def run(source: str, namespace: dict):
    """Run a code cell here as a kernel would, returning the value of its last line when that is an expression."""
    tree = python(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - our own generated code
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace) if last else None  # noqa: S307


@pytest.mark.parametrize("page", PAGES)
def test_each_pages_notebook_runs_in_process_and_every_figure_cell_gives_a_figure(page):
    """Every recipe's code, executed here (no kernel): a broken recipe fails without starting Jupyter."""
    namespace: dict = {}
    query = "seq=16,32&impls=sdpa,explicit&heads=1&head_dim=8" if page == "benchmark" else "source=decoder"
    for cell in cells(page, query):
        if cell.cell_type == "code":
            value = run(cell.source, namespace)
            if cell.metadata.get("attnlab", {}).get("figure"):
                spec = value.to_dict()
                assert spec["data"] and json.dumps(spec, default=str)


def test_a_language_model_link_opens_its_sections_in_the_notebook_with_its_sampler():
    got = cells("lm", "lang=zh&open=lens,attribution,branches&top_k=0&top_p=0.9&temperature=0.8&q=4&target=%E9%9C%9C")
    figures = [c for c in got if c.cell_type == "code" and c.metadata.get("attnlab", {}).get("figure")]
    keys = [c.metadata["attnlab"]["figure"] for c in figures]
    assert {"lm_lens", "lm_parts", "lm_branches"} <= set(keys)
    notes = next(c.source for c in got if c.cell_type == "markdown" and words("zh")["replaced_title"] in c.source)
    assert code_span("top_k=0") in notes  # below 1: no top-k cut, said as on the page
    setup = next(c.source for c in got if c.cell_type == "code" and "lmlib.load" in c.source)
    assert "temperature, top_k, top_p, seed = 0.8, None, 0.9, 0" in setup
    namespace: dict = {}
    for cell in got:
        if cell.cell_type == "code" and not cell.metadata.get("attnlab", {}).get("figure"):  # the setup
            run(cell.source, namespace)
    parts = run(next(c.source for c in figures if c.metadata["attnlab"]["figure"] == "lm_parts"), namespace)
    model, token, row = namespace["model"], namespace["token"], namespace["row"]
    assert token == model.token_id("霜")
    logit = float(model.forward(torch.tensor([list(namespace["got"].ids)])).logits[0, row, token])
    assert abs(sum(float(x) for trace in parts.to_dict()["data"] for x in trace["x"]) - logit) < 1e-4
    assert run(next(c.source for c in figures if c.metadata["attnlab"]["figure"] == "lm_lens"), namespace).to_dict()
