"""What every page family's link module shares: the app-wide values each link carries, and a replaced value's record.

Pure Python, no import of any page's modules: every module of `attnlab.links` imports this one and nothing imports
it back, so the package's import direction runs one way (`attnlab.links` -> a family's module -> this).
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.params import Param, choice_param

LANGS = ("en", "zh")
PALETTE_NAMES = ("default", "cb")  # attnlab.figures.palette.PALETTES' names (a test keeps the two equal)


def app_params() -> tuple[Param, ...]:  # ui.app.state.APP's (kept there: the sidebar never waits for this package)
    """The settings every page shares and every link carries."""
    return choice_param("lang", "en", LANGS), choice_param("palette", PALETTE_NAMES[0], PALETTE_NAMES)


@dataclass(frozen=True)
class Replaced:
    """A link's value that could not be honoured: what it said and what is used instead (outside text kept raw)."""

    name: str
    raw: str
    used: str
    reason: str
