"""The install files agree: pyproject.toml's ranges and extras, the pinned requirements*.txt, Community Cloud's copy."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PYTORCH_CPU = "https://download.pytorch.org/whl/cpu"


def read_requirements(path: Path) -> tuple[dict[str, Version], list[str]]:
    """A requirements file's pins {name: version} (following -r) and its option lines (those starting with -)."""
    pins: dict[str, Version] = {}
    options: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            pins.update(read_requirements(path.parent / line[3:].strip())[0])
        elif line.startswith("-"):
            options.append(line)
        else:
            req = Requirement(line)
            (spec,) = req.specifier  # every line is one exact pin
            assert spec.operator == "==", f"{path.name}: {line} is not a pin"
            pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins, options


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared() -> dict[str, list[Requirement]]:
    """pyproject's dependencies, by group ("" for the library itself), the extras' references to attnlab left out."""
    project = pyproject()
    groups = {"": project["dependencies"], **project["optional-dependencies"]}
    return {
        group: [Requirement(r) for r in reqs if canonicalize_name(Requirement(r).name) != "attnlab"]
        for group, reqs in groups.items()
    }


def test_the_cloud_requirements_pin_the_roots_versions_with_cpu_only_torch():
    root, root_options = read_requirements(ROOT / "requirements.txt")
    cloud, cloud_options = read_requirements(ROOT / "cloud" / "requirements.txt")
    assert {name: v.public for name, v in cloud.items()} == {name: v.public for name, v in root.items()}
    assert cloud["torch"].local == "cpu" and root["torch"].local is None
    assert {name for name, v in cloud.items() if v != root[name]} == {"torch"}
    assert cloud_options == [f"--extra-index-url {PYTORCH_CPU}"]
    assert root_options == [], "the root file installs from a package mirror alone (no PyTorch index)"


def test_the_pins_satisfy_pyproject_and_pin_everything_it_names():
    pins, _ = read_requirements(ROOT / "requirements-dev.txt")  # includes requirements.txt
    for group, reqs in declared().items():
        for req in reqs:
            name = canonicalize_name(req.name)
            assert name in pins, f"pyproject's {group or 'dependencies'} name {name}, which no requirements file pins"
            assert req.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]} is not {req}"


def test_the_extras_are_the_contracts_and_the_library_alone_has_no_streamlit():
    groups = declared()
    assert set(groups) == {"", "app", "notebook", "dev"}
    library = {canonicalize_name(r.name) for r in groups[""]}
    assert {"numpy", "torch", "safetensors", "plotly"} <= library
    assert not library & {"streamlit", "pandas", "transformers", "tokenizers"}
    assert "streamlit" in {canonicalize_name(r.name) for r in groups["app"]}
    assert {"nbformat", "ipykernel"} <= {canonicalize_name(r.name) for r in groups["notebook"]}
    assert pyproject()["scripts"] == {"attnlab": "attnlab.cli:main"}


def test_the_requirements_reader_follows_includes_and_refuses_ranges(tmp_path):
    (tmp_path / "a.txt").write_text("numpy==2.4.6  # a comment\n--extra-index-url https://x\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("-r a.txt\ntorch==2.13.0+cpu\n", encoding="utf-8")
    pins, options = read_requirements(tmp_path / "b.txt")
    assert pins == {"numpy": Version("2.4.6"), "torch": Version("2.13.0+cpu")} and options == []
    (tmp_path / "c.txt").write_text("numpy>=2\n", encoding="utf-8")
    try:
        read_requirements(tmp_path / "c.txt")
    except AssertionError as exc:
        assert re.search("not a pin", str(exc))
    else:
        raise AssertionError("a range passed as a pin")
