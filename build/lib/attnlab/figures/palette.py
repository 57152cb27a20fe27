"""The colours of every chart, in one switchable palette: no figure or page writes a colour of its own.

Each script run picks the palette for its session with `use()`; builders read `current()`. A
ContextVar keeps one session's choice from leaking into another's figures (each session runs its
script in its own thread, and a new thread starts from the default).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

Scale = str | list[list]  # a Plotly colourscale: a named scale or [[stop, colour], ...]


@dataclass(frozen=True)
class Palette:
    """Colour scales for matrices, marks for blocked cells and rules, and the colours of line series."""

    name: str
    signed: Scale  # diverging, for values around 0 (scores, projections)
    prob: Scale  # sequential, for probabilities in 0..1 (attention weights)
    positive: Scale  # sequential, for magnitudes and differences
    heads: Scale  # categorical-looking scale for which head owns a column
    blocked: str  # fill of a cell the mask blocks (−∞)
    blocked_text: str  # the "−∞" written in such a cell
    rule: str  # rules between heads or blocks
    highlight: str  # outline of the picked row or the current tile
    neutral: str  # reference lines: theory, the user's own setting
    grid: str  # light grid lines on line charts
    lines: tuple[str, ...]  # one colour per series, in order

    def line(self, i: int) -> str:
        """The colour of series i (colours repeat past the end)."""
        return self.lines[i % len(self.lines)]


DEFAULT = Palette(
    name="default",
    signed="RdBu_r",
    prob="Blues",
    positive="Viridis",
    heads="Turbo",
    blocked="#c8c8c8",
    blocked_text="#444444",
    rule="#222222",
    highlight="#e8590c",
    neutral="#555555",
    grid="#eeeeee",
    lines=("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"),
)
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
COLOUR_BLIND = Palette(
    name="cb",
    # blue-orange diverging (ColorBrewer PuOr's oranges with RdBu's blues): no red-green axis
    signed=[
        [0.0, "#08519c"],
        [0.17, "#3182bd"],
        [0.33, "#9ecae1"],
        [0.5, "#f7f7f7"],
        [0.67, "#fdb863"],
        [0.83, "#e08214"],
        [1.0, "#b35806"],
    ],
    prob="Cividis",  # perceptually uniform and designed to read the same with colour-vision deficiency
    positive="Viridis",
    heads=[[i / 7, colour] for i, colour in enumerate(OKABE_ITO)],
    blocked="#bdbdbd",
    blocked_text="#000000",
    rule="#000000",
    highlight="#000000",
    neutral="#555555",
    grid="#eeeeee",
    lines=OKABE_ITO,
)
TRANSPARENT = "rgba(0,0,0,0)"  # invisible marks (click targets, backgrounds): not a colour any palette hands out
PALETTES: dict[str, Palette] = {p.name: p for p in (DEFAULT, COLOUR_BLIND)}
_current: ContextVar[Palette] = ContextVar("palette", default=DEFAULT)


def use(name: str) -> None:
    """Draw this run's figures with the named palette (unknown names keep the default)."""
    _current.set(PALETTES.get(name, DEFAULT))


def current() -> Palette:
    """The palette of the figures being built now."""
    return _current.get()
