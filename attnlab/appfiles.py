"""Where the app's files are: app.py and views/ beside the package in a clone, else the copies a wheel installs.

A clone (or `pip install -e`) has them at the repository's root, beside `attnlab/`. A wheel (`pip install
'.[app]'`) installs them as data into `<prefix>/share/attnlab/` (pyproject.toml's data-files), with the server
settings in `.streamlit/config.toml` beside `app.py`, where Streamlit looks for them. The registry builds every
page from `views()` and `attnlab app` runs `entry()`.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

CLONE = Path(__file__).resolve().parents[1]  # the repository's root, when the package lives in a clone
SHARED = ("share", "attnlab")  # where a wheel's data-files put app.py, views/ and .streamlit/


def homes() -> list[Path]:
    """Candidate folders holding app.py and views/, the clone first, then each install scheme's data folder."""
    found = [CLONE, Path(sys.prefix).joinpath(*SHARED)]
    for scheme in ("posix_user", "nt_user"):
        if scheme in sysconfig.get_scheme_names():
            found.append(Path(sysconfig.get_path("data", scheme)).joinpath(*SHARED))
    return found


def home() -> Path:
    """The first folder that holds app.py and views/playground.py (the clone's when there is one)."""
    for folder in homes():
        if (folder / "app.py").is_file() and (folder / "views" / "playground.py").is_file():
            return folder
    return CLONE


def entry() -> Path:
    """The app's entry point, app.py."""
    return home() / "app.py"


def views() -> Path:
    """The folder of the pages' views."""
    return home() / "views"
