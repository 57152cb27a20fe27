"""attnlab as a library: importing it changes no Plotly global, it needs no Streamlit, and its command dispatches."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import attnlab
from attnlab import cli
from attnlab.testing import ROOT
from tests.conftest import FRESH_GROUP
from tests.fresh import answer

pytestmark = pytest.mark.xdist_group("library")  # one worker starts the `library` interpreter once

MODULES = sorted(m.name for m in pkgutil.walk_packages(attnlab.__path__, "attnlab.") if not m.name.endswith("__main__"))
APP_ONLY = ("streamlit", "pandas", "tokenizers", "transformers", "sentence_transformers")
BLOCK = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {APP_ONLY!r}:
            raise ImportError(f"{{name}} is not installed with the library alone")
sys.meta_path.insert(0, Block())
"""


def python(code: str) -> str:
    """Run code in a fresh interpreter from the repository's root; its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


STREAMLIT_LAYER = ("attnlab.ui", "attnlab.testing")  # the app's modules: they need Streamlit
LIBRARY = [name for name in MODULES if not name.startswith(STREAMLIT_LAYER)]
GLOBALS = "(pio.templates.default, sorted(pio.templates), pio.renderers.default)"


FIGURES = """
from attnlab.figures.lessons import weights_bar
from attnlab.figures.heads import head_columns_figure
decoder = trained.load('induction-2l')
part = attnfile.from_decoder(decoder, decoder.vocab[:6] * 2)
run = decoder.run(decoder.vocab[:6] * 2)
figs = [model_view(part), head_view(part, layer=1, head=0, query=8), query_key_map(part, 1, 0, query=8),
        head_view(tuple(torch.as_tensor(run.attentions)[:, None]), list(run.tokens)),
        weights_bar(['a', 'b'], [0.25, 0.75], 't'), head_columns_figure(4, 2, ['h1', 'h2'])]
layouts.append(json.dumps([f.to_plotly_json()['layout'] for f in figs], sort_keys=True, default=str))
"""


@pytest.fixture(scope="module")
def library() -> dict:
    """One fresh interpreter with the app's packages blocked: every library module imported, then figures drawn
    under Plotly's own default and under two a user might set."""
    code = BLOCK + (
        "import importlib, json, torch, plotly.io as pio\n"
        f"before = {GLOBALS}\n"
        f"for name in {LIBRARY!r}: importlib.import_module(name)\n"
        f"after = {GLOBALS}\n"
        "from attnlab import attnfile, trained\n"
        "from attnlab.figures import head_view, model_view, query_key_map\n"
        "layouts = []\n"
        f"exec({FIGURES!r})\n"
        "for default in ('plotly_dark', 'none'):\n"
        "    pio.templates.default = default\n"
        f"    exec({FIGURES!r})\n"
        "app = sorted(m for m in sys.modules if m.split('.')[0] in {'streamlit', 'pandas'})\n"
        "print(json.dumps(dict(before=before, after=after, layouts=layouts, figures=len(figs), app=app)))\n"
    )
    return json.loads(python(code).splitlines()[-1])


def test_importing_every_library_module_changes_no_plotly_global(library):
    """A notebook's own charts keep their look: no default template, no registered template, no renderer."""
    assert {"attnlab.figures.prebuilt", "attnlab.attnfile", "attnlab.trained", "attnlab.cli"} <= set(LIBRARY)
    assert library["after"] == library["before"] and library["before"][0] == "plotly"


@FRESH_GROUP
def test_the_app_modules_add_nothing_to_what_streamlit_itself_sets(fresh_answers):
    """Streamlit makes its own template Plotly's default when its chart element loads; attnlab's layer adds nothing
    (a fresh interpreter, tests/fresh.py, loads the element, then imports every attnlab module)."""
    before, after = answer(fresh_answers, "app_modules_and_plotly")
    assert after == before and before[0] != "plotly"  # Streamlit's own template is the default by then


def test_figures_look_the_same_whatever_plotlys_default_is(library):
    """The app's look travels with each figure, so no import order (nor a user's own default) changes a chart."""
    plain, dark, none = library["layouts"]
    assert plain == dark == none
    assert json.loads(plain)[4]["template"]["layout"]["paper_bgcolor"] == "rgba(0,0,0,0)"


def test_the_library_imports_and_draws_without_streamlit_or_pandas(library):
    assert library["figures"] == 6 and library["app"] == []


def test_the_command_dispatches_and_passes_arguments_through(monkeypatch, capsys):
    seen: dict[str, object] = {}
    monkeypatch.setattr("attnlab.bench.__main__.main", lambda argv: seen.setdefault("bench", argv) and 0)
    monkeypatch.setattr("attnlab.train.main", lambda argv: seen.setdefault("train", argv))
    monkeypatch.setattr(cli.subprocess, "call", lambda command: seen.setdefault("app", command) and 0)
    assert cli.main(["bench", "--device", "cpu", "--seq-lens", "8"]) == 0
    assert cli.main(["train", "induction-1l", "--out", "runs"]) == 0
    assert cli.main(["app", "--server.port", "8502"]) == 0
    assert seen["bench"] == ["--device", "cpu", "--seq-lens", "8"]
    assert seen["train"] == ["induction-1l", "--out", "runs"]
    assert seen["app"] == [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", "8502"]
    assert cli.main([]) == 2 and cli.main(["serve"]) == 2 and "attnlab app" in capsys.readouterr().err


def test_attnlab_app_without_streamlit_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["app"]) == 1
    assert "pip install 'attnlab[app]'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["bench", "train"])
def test_the_commands_help_is_the_modules_own(command, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and ("--seq-lens" in out if command == "bench" else "--steps" in out)


def test_the_app_files_are_the_clones_else_those_a_wheel_installed(monkeypatch, tmp_path):
    from attnlab import appfiles

    assert appfiles.entry() == ROOT / "app.py" and appfiles.views() == ROOT / "views"
    installed = tmp_path / "prefix" / "share" / "attnlab"
    (installed / "views").mkdir(parents=True)
    (installed / "app.py").write_text("", encoding="utf-8")
    (installed / "views" / "playground.py").write_text("", encoding="utf-8")
    monkeypatch.setattr(appfiles, "CLONE", tmp_path / "site-packages")  # a wheel: nothing beside the package
    monkeypatch.setattr(appfiles.sys, "prefix", str(tmp_path / "prefix"))
    assert appfiles.entry() == installed / "app.py" and appfiles.views() == installed / "views"
