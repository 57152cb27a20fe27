"""The code style the project keeps: ruff's lint rules and formatter (configured in pyproject.toml) pass on the tree."""

from __future__ import annotations

import subprocess
import sys

import pytest

from attnlab.testing import ROOT


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_passes(command):
    done = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
