"""Community Cloud's entry point (cloud/streamlit_app.py) serves the same app as app.py: same pages, same charts."""

from __future__ import annotations

import ast

import pytest
from streamlit.util import calc_hash

from attnlab.testing import ROOT, app_test, page_on_screen
from tests.app.charts import figures
from tests.app.conftest import assert_clean

ENTRY = "cloud/streamlit_app.py"


def shown(script: str, url_path: str, **query: str):
    """What a visitor of /<url_path>?<query> gets through one entry point: titles, texts and every chart's JSON."""
    at = app_test(url_path=url_path, script=script)
    at.query_params.update(query)
    at.run()
    assert_clean(at)
    assert page_on_screen(at) == calc_hash(url_path), f"{script} drew another page than /{url_path}"
    return at, [t.value for t in at.title], [m.value for m in at.markdown], figures(at)


@pytest.mark.parametrize(("url_path", "query"), [("playground", {}), ("multihead", {"lang": "zh"})])
def test_the_cloud_entry_point_opens_the_same_pages_as_app_py(url_path, query):
    at, titles, texts, charts = shown(ENTRY, url_path, **query)
    assert titles and charts, "the page drew nothing through the cloud entry point"
    _, titles_root, texts_root, charts_root = shown("app.py", url_path, **query)
    assert (titles, texts) == (titles_root, texts_root)
    assert charts == charts_root


def test_the_cloud_entry_point_serves_the_routers_app_and_warm_up():
    """`streamlit run` finds an `st.App` by reading the file (an assignment), so the entry must spell one out."""
    tree = ast.parse((ROOT / ENTRY).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert {"route", "warm_in_background"} <= imported
    apps = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Call)
        and ast.unparse(n.value.func) == "st.App"
        and [k.arg for k in n.value.keywords] == ["lifespan"]
        and ast.unparse(n.value.keywords[0].value) == "warm_in_background"
    ]
    assert [ast.unparse(n.targets[0]) for n in apps] == ["app"]
