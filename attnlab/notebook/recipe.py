"""What a notebook recipe is: a page's scopes, its setup cell, its figure cells and its late fall-backs, as data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnlab.links import Replaced


@dataclass(frozen=True)
class Figure:
    """One figure cell: its sentence (`takeout.<key>`, or `stages.<name>` for a stage) and the code that draws it."""

    key: str
    code: str


@dataclass(frozen=True)
class Recipe:
    """How one page's figures are rebuilt: its scopes, its setup cell, its figures, its late fall-backs."""

    file: str  # the registry's file name: its title is nav.<file>
    scopes: tuple[str, ...]
    setup: Callable[[dict[str, Any]], str]
    figures: Callable[[dict[str, Any]], tuple[Figure, ...]]
    fix: Callable[[dict[str, Any]], list[Replaced]] = field(default=lambda v: [])
